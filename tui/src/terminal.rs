//! The process's terminal: raw mode, bracketed paste, the kitty keyboard protocol where the terminal knows it,
//! the alternate screen for fullscreen programs, a hidden hardware cursor (components draw their own), and
//! input read on a thread of its own. Everything it switches on is switched off again on stop, on drop, and
//! around a suspension (Ctrl+Z, an external editor).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, Event, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute, terminal};

use crate::renderer::ScreenMode;

/// What the program receives from the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputEvent {
    Key(crossterm::event::KeyEvent),
    Paste(String),
    /// The terminal's new size: columns, rows.
    Resize(u16, u16),
}

/// The terminal the program draws on, set up for a line-based UI.
pub struct ProcessTerminal {
    mode: ScreenMode,
    active: bool,
    keyboard_enhanced: bool,
    input_paused: Arc<AtomicBool>,
}

impl ProcessTerminal {
    /// Switches the terminal to raw mode with bracketed paste and a hidden cursor (and the alternate screen
    /// in fullscreen mode).
    pub fn start(mode: ScreenMode) -> std::io::Result<Self> {
        let mut terminal = Self { mode, active: false, keyboard_enhanced: false, input_paused: Arc::default() };
        terminal.activate()?;
        restore_on_panic(mode);
        Ok(terminal)
    }

    fn activate(&mut self) -> std::io::Result<()> {
        terminal::enable_raw_mode()?;
        self.active = true;
        let mut stdout = std::io::stdout();
        if self.mode == ScreenMode::Fullscreen {
            execute!(stdout, EnterAlternateScreen)?;
        }
        execute!(stdout, EnableBracketedPaste, cursor::Hide)?;
        // Shift+Enter, Ctrl+- and the like are only told apart with the kitty protocol. Asking the terminal
        // whether it knows the protocol costs a round trip (and a timeout where nobody answers), so the flags
        // are pushed unasked: terminals that do not know them ignore the sequence.
        execute!(stdout, PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES))?;
        self.keyboard_enhanced = true;
        Ok(())
    }

    /// Undoes everything [`ProcessTerminal::start`] switched on. Safe to call more than once.
    pub fn stop(&mut self) {
        if !self.active {
            return;
        }
        self.active = false;
        let mut stdout = std::io::stdout();
        if self.keyboard_enhanced {
            let _ = execute!(stdout, PopKeyboardEnhancementFlags);
        }
        let _ = execute!(stdout, DisableBracketedPaste, cursor::Show);
        if self.mode == ScreenMode::Fullscreen {
            let _ = execute!(stdout, LeaveAlternateScreen);
        }
        let _ = terminal::disable_raw_mode();
    }

    /// Hands the terminal to another program (an editor, the shell on Ctrl+Z) until [`ProcessTerminal::resume`].
    pub fn suspend(&mut self) {
        self.input_paused.store(true, Ordering::SeqCst);
        self.stop();
    }

    /// Takes the terminal back after [`ProcessTerminal::suspend`]; the caller redraws everything.
    pub fn resume(&mut self) -> std::io::Result<()> {
        self.activate()?;
        self.input_paused.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// Columns and rows.
    pub fn size(&self) -> (u16, u16) {
        terminal::size().unwrap_or((80, 24))
    }

    pub fn write(&mut self, bytes: &str) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes.as_bytes())?;
        stdout.flush()
    }

    /// Waits on this thread for the next key, paste or resize (for a question asked before
    /// [`ProcessTerminal::spawn_input`] starts reading).
    pub fn read_input(&self) -> std::io::Result<InputEvent> {
        loop {
            match crossterm::event::read()? {
                Event::Key(key) => return Ok(InputEvent::Key(key)),
                Event::Paste(text) => return Ok(InputEvent::Paste(text)),
                Event::Resize(columns, rows) => return Ok(InputEvent::Resize(columns, rows)),
                _ => {}
            }
        }
    }

    /// Reads input on a thread of its own and hands every event to `deliver` until it returns false.
    /// Reading pauses while the terminal is suspended, so another program gets the keys.
    pub fn spawn_input(&self, deliver: impl Fn(InputEvent) -> bool + Send + 'static) {
        // The event source (and its SIGWINCH handler) is made here, before the first frame. It is crossterm's
        // `/dev/tty` source (the `use-dev-tty` feature): its poll(2) is level-triggered, where the default
        // mio source drops the terminal's readiness when a resize is reported in the same wake-up, leaving
        // the keys typed meanwhile unread until the next key.
        let _ = crossterm::event::poll(Duration::ZERO);
        let paused = self.input_paused.clone();
        std::thread::spawn(move || {
            loop {
                if paused.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                // A long timeout: crossterm rounds the last millisecond of a wait down to a busy poll.
                match crossterm::event::poll(Duration::from_millis(250)) {
                    Ok(false) => continue,
                    Ok(true) => {}
                    Err(_) => break,
                }
                // Suspended while waiting: the input is another program's now.
                if paused.load(Ordering::SeqCst) {
                    continue;
                }
                let event = match crossterm::event::read() {
                    Ok(Event::Key(key)) => InputEvent::Key(key),
                    Ok(Event::Paste(text)) => InputEvent::Paste(text),
                    Ok(Event::Resize(columns, rows)) => InputEvent::Resize(columns, rows),
                    Ok(_) => continue,
                    Err(_) => break,
                };
                if !deliver(event) {
                    break;
                }
            }
        });
    }
}

/// A panic (with `panic = "abort"` no destructor runs) first gives the terminal back, so the message is
/// readable and the shell usable.
fn restore_on_panic(mode: ScreenMode) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let mut stdout = std::io::stdout();
            let _ = execute!(stdout, PopKeyboardEnhancementFlags, DisableBracketedPaste, cursor::Show);
            if mode == ScreenMode::Fullscreen {
                let _ = execute!(stdout, LeaveAlternateScreen);
            }
            let _ = terminal::disable_raw_mode();
            let _ = stdout.write_all(b"\r\n");
            previous(info);
        }));
    });
}

impl Drop for ProcessTerminal {
    fn drop(&mut self) {
        self.stop();
    }
}
