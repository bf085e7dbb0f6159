//! A generated agent in a real pseudo-terminal: keys go in as bytes, the output is read through a terminal
//! emulator (vt100, with scrollback), and tests wait for what a person would see.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// How long a test waits for the screen to show something before it fails.
const WAIT: Duration = Duration::from_secs(30);

/// Key sequences as a terminal sends them.
pub mod keys {
    pub const ENTER: &str = "\r";
    pub const ESCAPE: &str = "\x1b";
    pub const CTRL_C: &str = "\x03";
    pub const CTRL_D: &str = "\x04";
    pub const CTRL_O: &str = "\x0f";
    pub const TAB: &str = "\t";
    pub const UP: &str = "\x1b[A";
    pub const DOWN: &str = "\x1b[B";
    pub const ALT_ENTER: &str = "\x1b\r";
    /// Shift+Enter in the kitty keyboard protocol.
    pub const SHIFT_ENTER: &str = "\x1b[13;2u";
    pub const ALT_UP: &str = "\x1b[1;3A";
}

/// A running agent in a pseudo-terminal.
pub struct PtyAgent {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser>>,
    /// Every byte the agent wrote, for diagnostics.
    raw: Arc<Mutex<Vec<u8>>>,
}

impl PtyAgent {
    pub fn spawn(
        binary: &Path,
        args: &[&str],
        cwd: &Path,
        env: &[(String, String)],
        remove: &[&str],
        rows: u16,
        columns: u16,
    ) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize { rows, cols: columns, pixel_width: 0, pixel_height: 0 })
            .expect("a pseudo-terminal opens");
        let mut command = CommandBuilder::new(binary);
        command.args(args);
        command.cwd(cwd);
        command.env("TERM", "xterm-256color");
        for key in remove {
            command.env_remove(key);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pair.slave.spawn_command(command).expect("the agent starts in the pseudo-terminal");
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(rows).unwrap_or(std::num::NonZeroU16::MIN),
            std::num::NonZeroU16::new(columns).unwrap_or(std::num::NonZeroU16::MIN),
            10_000,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let (screen, log) = (parser.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            loop {
                match reader.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(count) => {
                        lock(&screen).process(&buffer[..count]);
                        lock(&log).extend_from_slice(&buffer[..count]);
                    }
                }
            }
        });
        let writer = pair.master.take_writer().expect("writer");
        Self { master: pair.master, writer, child, parser, raw }
    }

    /// The agent's process id (for signals).
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Types `text` (key sequences from [`keys`] included).
    pub fn send(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).expect("write to the pseudo-terminal");
        self.writer.flush().expect("flush");
    }

    /// Types `text`, one key at a time, as a person would.
    pub fn type_text(&mut self, text: &str) {
        for character in text.chars() {
            self.send(&character.to_string());
        }
    }

    /// The visible screen, one string per row (trailing spaces removed).
    pub fn screen(&self) -> Vec<String> {
        let parser = lock(&self.parser);
        let columns = parser.screen().size().1.get();
        parser.screen().rows(0, columns).map(|row| row.trim_end().to_owned()).collect()
    }

    pub fn screen_text(&self) -> String {
        self.screen().join("\n")
    }

    /// Scrollback and screen, oldest line first.
    pub fn history(&self) -> Vec<String> {
        let mut parser = lock(&self.parser);
        let columns = parser.screen().size().1.get();
        let back = parser.screen().scrollback_len();
        let mut lines = Vec::new();
        for offset in (1..=back).rev() {
            parser.screen_mut().set_scrollback(offset);
            if let Some(row) = parser.screen().rows(0, columns).next() {
                lines.push(row.trim_end().to_owned());
            }
        }
        parser.screen_mut().set_scrollback(0);
        lines.extend(parser.screen().rows(0, columns).map(|row| row.trim_end().to_owned()));
        lines
    }

    /// Waits until the screen satisfies `check`; fails with the screen when it does not in time.
    pub fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.screen_text();
            if check(&text) {
                return text;
            }
            if start.elapsed() > WAIT {
                let raw = self.raw_output();
                let tail: String = raw.chars().rev().take(3000).collect::<Vec<_>>().into_iter().rev().collect();
                panic!("the screen never showed {what}; it shows:\n{text}\n--- the last output, raw:\n{tail:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen holds `text`.
    pub fn wait_for_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?}"), |screen| screen.contains(text))
    }

    /// Waits until the screen no longer holds `text`.
    pub fn wait_for_absence(&self, text: &str) -> String {
        self.wait_for(&format!("no {text:?}"), |screen| !screen.contains(text))
    }

    /// Resizes the terminal (the agent gets SIGWINCH) and the emulator.
    pub fn resize(&mut self, rows: u16, columns: u16) {
        self.master.resize(PtySize { rows, cols: columns, pixel_width: 0, pixel_height: 0 }).expect("resize");
        lock(&self.parser).screen_mut().set_size(
            std::num::NonZeroU16::new(rows).unwrap_or(std::num::NonZeroU16::MIN),
            std::num::NonZeroU16::new(columns).unwrap_or(std::num::NonZeroU16::MIN),
        );
    }

    /// Waits for the agent to exit; returns its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                return status.exit_code();
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("the agent did not exit; the screen shows:\n{}", self.screen_text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything the agent wrote so far, as text.
    pub fn raw_output(&self) -> String {
        String::from_utf8_lossy(&lock(&self.raw)).into_owned()
    }
}

impl Drop for PtyAgent {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
