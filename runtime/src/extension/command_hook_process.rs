//! Running one command hook: `bash -c <command>` in its own process group, the event JSON on stdin,
//! stdout and stderr read separately (each capped), a deadline after which the whole group is killed.

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

use crate::tools::bash::GroupKiller;

/// Bytes of stdout and of stderr kept; stdout beyond this is an error, stderr keeps its last part.
pub(super) const OUTPUT_CAP: usize = 1024 * 1024;
/// How long output is still read after the shell exits (data already in the pipes). Background processes
/// that keep a pipe open are not waited for beyond this.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// How long a killed shell is waited for (so it does not linger as a zombie).
const REAP_GRACE: Duration = Duration::from_secs(2);

/// What to run.
pub(super) struct Invocation<'a> {
    pub shell: &'a Path,
    pub command: &'a str,
    pub cwd: &'a Path,
    pub env: Vec<(&'static str, String)>,
    pub stdin: Vec<u8>,
    pub timeout: Duration,
}

/// A finished run.
#[derive(Debug)]
pub(super) struct Finished {
    pub status: ExitStatus,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// Why a run has no result.
#[derive(Debug)]
pub(super) enum RunError {
    /// The command could not be started (or its pipes could not be read).
    Io(String),
    /// The deadline passed; the process group was killed.
    TimedOut,
}

/// One output stream, capped at [`OUTPUT_CAP`] bytes.
#[derive(Debug, Default)]
pub(super) struct Captured {
    bytes: Vec<u8>,
    /// Bytes that did not fit (dropped).
    dropped: usize,
    /// Keep the end (stderr) rather than the start (stdout) when over the cap.
    keep_tail: bool,
}

impl Captured {
    fn tail() -> Self {
        Self { keep_tail: true, ..Self::default() }
    }

    fn push(&mut self, chunk: &[u8]) {
        if self.keep_tail {
            self.bytes.extend_from_slice(chunk);
            if self.bytes.len() > 2 * OUTPUT_CAP {
                let cut = self.bytes.len() - OUTPUT_CAP;
                self.bytes.drain(..cut);
                self.dropped += cut;
            }
        } else {
            let room = OUTPUT_CAP.saturating_sub(self.bytes.len());
            let taken = room.min(chunk.len());
            self.bytes.extend_from_slice(&chunk[..taken]);
            self.dropped += chunk.len() - taken;
        }
    }

    /// Cuts a tail-kept stream to the cap (it is allowed to grow to twice the cap between cuts).
    fn settle(&mut self) {
        if self.keep_tail && self.bytes.len() > OUTPUT_CAP {
            let cut = self.bytes.len() - OUTPUT_CAP;
            self.bytes.drain(..cut);
            self.dropped += cut;
        }
    }

    /// Bytes that did not fit.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Reads a chunk from `stream`, `None` once it is closed (or failed).
async fn read_chunk<R: AsyncRead + Unpin>(stream: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    let reader = stream.as_mut()?;
    loop {
        match reader.read(buf).await {
            Ok(0) => return None,
            Ok(n) => return Some(n),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// Runs the invocation to its end (or its deadline).
pub(super) async fn run(invocation: Invocation<'_>) -> Result<Finished, RunError> {
    if !invocation.cwd.is_dir() {
        return Err(RunError::Io(format!("the working directory {} does not exist", invocation.cwd.display())));
    }
    let mut child = tokio::process::Command::new(invocation.shell)
        .arg("-c")
        .arg(invocation.command)
        .current_dir(invocation.cwd)
        .envs(invocation.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|error| RunError::Io(format!("cannot start {}: {error}", invocation.shell.display())))?;
    let mut killer = GroupKiller::for_child(&child);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let child_stdin = child.stdin.take();
    // The pipe is dropped when the write is done (or with this future), closing the command's stdin. A
    // command that exits without reading makes the write fail with EPIPE, which is ignored.
    let input = invocation.stdin;
    let feed_stdin = async move {
        if let Some(mut pipe) = child_stdin {
            let _ = pipe.write_all(&input).await;
        }
    };
    tokio::pin!(feed_stdin);
    let mut stdin_done = false;

    let mut out = Captured::default();
    let mut err = Captured::tail();
    let mut out_buf = vec![0u8; 16 * 1024];
    let mut err_buf = vec![0u8; 16 * 1024];
    let deadline = Instant::now().checked_add(invocation.timeout);
    let mut status: Option<ExitStatus> = None;
    let mut drain_until: Option<Instant> = None;

    while !(status.is_some() && stdout.is_none() && stderr.is_none()) {
        tokio::select! {
            biased;
            _ = sleep_until_opt(deadline), if status.is_none() => {
                killer.kill();
                killer.disarm();
                let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
                return Err(RunError::TimedOut);
            }
            _ = sleep_until_opt(drain_until), if drain_until.is_some() => break,
            exit = child.wait(), if status.is_none() => {
                let exit = exit.map_err(|error| RunError::Io(format!("cannot wait for the command: {error}")))?;
                status = Some(exit);
                // The shell is gone: background processes it left running are not ours to kill.
                killer.disarm();
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            read = read_chunk(&mut stdout, &mut out_buf), if stdout.is_some() => match read {
                Some(n) => out.push(&out_buf[..n]),
                None => stdout = None,
            },
            read = read_chunk(&mut stderr, &mut err_buf), if stderr.is_some() => match read {
                Some(n) => err.push(&err_buf[..n]),
                None => stderr = None,
            },
            () = &mut feed_stdin, if !stdin_done => stdin_done = true,
        }
    }
    err.settle();
    match status {
        Some(status) => Ok(Finished { status, stdout: out, stderr: err }),
        None => Err(RunError::Io("the command's status is unknown".to_owned())),
    }
}

/// How a non-zero exit reads in an error: `exit code 3` or `signal 9`.
pub(super) fn describe_failure(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "failed".to_owned(),
    }
}
