//! Console panels (Context Pilot's Console): a background process, such as a dev server, whose live output
//! is a panel.
//!
//! The command runs with the agent's shell and command prefix in the working directory, stdin `/dev/null`,
//! stdout and stderr sharing one pipe so their order is kept, in a process group of its own that is
//! registered with [`crate::tools::process_groups`] until it is gone, so leaving the agent kills it. A tokio
//! task reads the output into a bounded buffer (the last [`CONSOLE_MAX_LINES`] lines or
//! [`CONSOLE_MAX_BYTES`] bytes) and waits for the process.
//!
//! The console owns its whole process group: when the command exits, whatever it left running in the
//! background is killed too; [`ConsoleProcess::stop`] sends SIGTERM to the group and SIGKILL after
//! [`CONSOLE_STOP_GRACE`]; dropping a [`ConsoleProcess`] kills the group at once.
//!
//! The caller learns of changes by polling [`ConsoleProcess::version`] (it grows with every change of the
//! output or the status) and of the exit through [`ConsoleProcess::on_exit`], a watch channel that gets the
//! final status once the output is read to the end.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::net::unix::pipe;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::console_output::ConsoleOutput;
pub use super::console_output::{CONSOLE_MAX_BYTES, CONSOLE_MAX_LINES};
use crate::tools::ToolEnvironment;
use crate::tools::bash::{ShellCommand, with_command_prefix};
use crate::tools::process_groups;

/// How long [`ConsoleProcess::stop`] waits after SIGTERM before SIGKILL.
pub const CONSOLE_STOP_GRACE: Duration = Duration::from_secs(2);
/// How long output is still read after the command exited and its group was killed, for a process that
/// left the group but still holds the pipe.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Where a console's process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleStatus {
    /// Still running; `pid` is the shell's, which is also the process group's id.
    Running { pid: u32 },
    /// Exited with `code`, or was ended by `signal` (both `None` when waiting for it failed).
    Exited { code: Option<i32>, signal: Option<i32> },
}

/// Why a console could not start.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// The configured shell does not exist.
    #[error("{0}")]
    Shell(String),
    #[error("Working directory does not exist: {}", .0.display())]
    MissingWorkingDirectory(PathBuf),
    #[error("Cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("A console can only start inside a tokio runtime")]
    NoRuntime,
}

/// What the reading task and the handle share.
#[derive(Debug)]
struct ConsoleState {
    output: ConsoleOutput,
    status: ConsoleStatus,
    version: u64,
    /// The process group may still hold our processes, so signalling it is safe; false once killed and
    /// forgotten (its id could later name someone else's group).
    group_alive: bool,
}

type SharedState = Arc<Mutex<ConsoleState>>;

fn lock(state: &SharedState) -> MutexGuard<'_, ConsoleState> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends `signal` to the group, if it is still ours.
fn signal_group(state: &ConsoleState, pgid: i32, signal: i32) {
    if state.group_alive && pgid > 0 {
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid addresses the process group,
        // which the console's shell leads (spawned with process_group(0)).
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Kills what is left of the group and forgets it; later signals are not sent.
fn end_group(state: &SharedState, pgid: i32) {
    let mut state = lock(state);
    if state.group_alive {
        process_groups::kill_group(pgid);
        process_groups::forget(pgid);
        state.group_alive = false;
    }
}

/// A running (or finished) background command whose output is a panel.
#[derive(Debug)]
pub struct ConsoleProcess {
    name: String,
    command: String,
    pid: u32,
    pgid: i32,
    state: SharedState,
    stop_requested: CancellationToken,
    exit: watch::Receiver<Option<ConsoleStatus>>,
    driver: tokio::task::JoinHandle<()>,
}

impl ConsoleProcess {
    /// Starts `command` as the module describes; `name` is the panel's name. Must be called inside a tokio
    /// runtime (with its I/O and time drivers), which runs the reading task.
    pub fn start(name: &str, command: &str, env: &ToolEnvironment) -> Result<ConsoleProcess, ConsoleError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| ConsoleError::NoRuntime)?;
        let shell = ShellCommand::for_env(env).map_err(|err| ConsoleError::Shell(err.message))?;
        if !shell.cwd.is_dir() {
            return Err(ConsoleError::MissingWorkingDirectory(shell.cwd));
        }
        let spawn_error = |source| ConsoleError::Spawn { command: command.to_owned(), source };
        let (reader, writer) = std::io::pipe().map_err(spawn_error)?;
        let output_pipe = pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(spawn_error)?;
        let child = {
            let writer_for_stderr = writer.try_clone().map_err(spawn_error)?;
            let mut cmd = tokio::process::Command::new(&shell.shell);
            if let Some(path) = shell.path_env() {
                cmd.env("PATH", path);
            }
            cmd.arg("-c")
                .arg(with_command_prefix(env, command))
                .current_dir(&shell.cwd)
                .stdin(Stdio::null())
                .stdout(Stdio::from(writer))
                .stderr(Stdio::from(writer_for_stderr))
                .process_group(0);
            // `cmd` is dropped at the end of this block, closing our copies of the pipe's write end.
            cmd.spawn().map_err(spawn_error)?
        };
        let pid = child.id().unwrap_or_default();
        let pgid = i32::try_from(pid).unwrap_or_default();
        process_groups::register(pgid);
        let state = Arc::new(Mutex::new(ConsoleState {
            output: ConsoleOutput::default(),
            status: ConsoleStatus::Running { pid },
            version: 0,
            group_alive: pgid > 0,
        }));
        let (exit_sender, exit) = watch::channel(None);
        let stop_requested = CancellationToken::new();
        let driver = runtime.spawn(drive(child, output_pipe, pgid, state.clone(), stop_requested.clone(), exit_sender));
        Ok(ConsoleProcess {
            name: name.to_owned(),
            command: command.to_owned(),
            pid,
            pgid,
            state,
            stop_requested,
            exit,
            driver,
        })
    }

    /// The panel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The command as given (without the environment's prefix).
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The shell's process id, which is also its process group's id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The recent output: a `[… N earlier lines dropped]` line when old lines were dropped, then the kept
    /// lines as printed (stdout and stderr interleaved), the last one possibly unfinished.
    pub fn output(&self) -> String {
        lock(&self.state).output.text()
    }

    /// Whether the process runs; it reads `Exited` only once its output has been read to the end.
    pub fn status(&self) -> ConsoleStatus {
        lock(&self.state).status
    }

    /// A number that grows whenever the output or the status changes (0 right after the start).
    pub fn version(&self) -> u64 {
        lock(&self.state).version
    }

    /// A channel holding `None` while the process runs and its final status once it has exited and its
    /// output is read (after [`ConsoleProcess::status`] turned `Exited`). Await
    /// `receiver.wait_for(Option::is_some)`, which also returns at once when it already exited; it fails only
    /// when the console was dropped first.
    pub fn on_exit(&self) -> watch::Receiver<Option<ConsoleStatus>> {
        self.exit.clone()
    }

    /// Waits until the process has exited and its output is read, and returns how it ended.
    pub async fn wait(&self) -> ConsoleStatus {
        let mut exit = self.on_exit();
        match exit.wait_for(Option::is_some).await {
            Ok(status) => status.unwrap_or_else(|| self.status()),
            Err(_) => self.status(),
        }
    }

    /// Asks the process to end: SIGTERM to its group now, SIGKILL after [`CONSOLE_STOP_GRACE`] if the
    /// command is still running. Returns at once; watch [`ConsoleProcess::on_exit`] for the end. Does nothing
    /// once the process has exited.
    pub fn stop(&self) {
        signal_group(&lock(&self.state), self.pgid, libc::SIGTERM);
        self.stop_requested.cancel();
    }
}

impl Drop for ConsoleProcess {
    fn drop(&mut self) {
        self.stop_requested.cancel();
        end_group(&self.state, self.pgid);
        // The child is dropped with the task; tokio reaps it in the background.
        self.driver.abort();
    }
}

/// The console's task: reads the output, waits for the shell, escalates a stop, kills the group's leftovers
/// when the shell exits, then publishes the final status.
async fn drive(
    mut child: tokio::process::Child,
    mut output_pipe: pipe::Receiver,
    pgid: i32,
    state: SharedState,
    stop_requested: CancellationToken,
    exit_sender: watch::Sender<Option<ConsoleStatus>>,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    let mut exited: Option<ConsoleStatus> = None;
    let mut eof = false;
    let mut stop_seen = false;
    let mut kill_at: Option<Instant> = None;
    let mut drain_until: Option<Instant> = None;
    while !(eof && exited.is_some()) {
        tokio::select! {
            biased;
            () = stop_requested.cancelled(), if !stop_seen && exited.is_none() => {
                stop_seen = true;
                kill_at = Some(Instant::now() + CONSOLE_STOP_GRACE);
            }
            () = sleep_until_opt(kill_at), if kill_at.is_some() && exited.is_none() => {
                kill_at = None;
                // The shell is not reaped yet, so the group id is still ours.
                signal_group(&lock(&state), pgid, libc::SIGKILL);
            }
            () = sleep_until_opt(drain_until), if drain_until.is_some() => break,
            waited = child.wait(), if exited.is_none() => {
                let (code, signal) = match waited {
                    Ok(status) => (status.code(), status.signal()),
                    Err(_) => (None, None),
                };
                exited = Some(ConsoleStatus::Exited { code, signal });
                // The group's remaining members keep its id in use, so this reaches them and nobody else
                // (an empty group's id would have to be handed out again within microseconds to be hit).
                end_group(&state, pgid);
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            read = output_pipe.read(&mut buffer), if !eof => match read {
                Ok(0) => eof = true,
                Ok(n) => {
                    let mut state = lock(&state);
                    state.output.push(&buffer[..n]);
                    state.version += 1;
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => eof = true,
            },
        }
    }
    let status = exited.unwrap_or(ConsoleStatus::Exited { code: None, signal: None });
    {
        let mut state = lock(&state);
        state.status = status;
        state.version += 1;
    }
    exit_sender.send_replace(Some(status));
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
#[path = "tests_console.rs"]
mod tests;
