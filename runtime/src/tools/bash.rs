//! The `bash` tool: runs a command in its own process group, streams merged stdout+stderr, tail-truncates it.

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::unix::pipe;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationOptions, TruncationResult, format_size, truncate_tail,
};
use super::{
    AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, arg_number, arg_str, js_number, process_groups,
};
use crate::protocol::{AgentToolResult, UserContent};

/// Least time between two partial-output updates.
const UPDATE_THROTTLE: Duration = Duration::from_millis(100);
/// How long output is still collected after the shell exits, for data that is already in flight. Background
/// processes that keep the pipe open are not waited for beyond this.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// Bytes of recent output kept in memory (the rest is only in the spill file).
const KEEP_BYTES: usize = 2 * DEFAULT_MAX_BYTES;

/// Runs shell commands for the model.
pub struct BashTool {
    env: ToolEnvironment,
    description: String,
    parameters: Value,
}

impl BashTool {
    pub fn new(env: ToolEnvironment) -> Self {
        let description = format!(
            "Run a bash command in the current working directory and return what it prints (stdout and stderr \
             together). Only the last {DEFAULT_MAX_LINES} lines or {}KB of output are returned, whichever limit \
             is reached first; when output is cut, the complete output is saved to a temporary file. Pass a \
             timeout in seconds to stop long-running commands.",
            DEFAULT_MAX_BYTES / 1024
        );
        let parameters = json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "The bash command line to run"},
                "timeout": {"type": "number", "description": "Seconds after which the command is killed (no limit when omitted)"}
            }
        });
        Self { env, description, parameters }
    }
}

impl AgentTool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }
    fn label(&self) -> &str {
        "bash"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Execute bash commands (ls, grep, find, etc.)")
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let command = arg_str(&args, "command")?.to_owned();
            let timeout_secs = arg_number(&args, "timeout")?.filter(|t| t.is_finite() && *t > 0.0);
            let started = Instant::now();
            let out = run_in_shell(&self.env, command, &RunOptions::default(), timeout_secs, &ctx).await?;
            // Only pi 1.5 has the record; at 0.73 it would cost a read of up to 1 MiB for nothing.
            if !self.env.pi_compat.is_v1_5() {
                return command_result(&out, timeout_secs);
            }
            structured_command_result(&out, timeout_secs, started.elapsed())
        })
    }
}

/// The tool result bash reports for a finished command: its output, or an error for an abort, a timeout
/// (`timeout_secs` names the limit) or a non-zero exit code.
pub(crate) fn command_result(out: &BashOutput, timeout_secs: Option<f64>) -> Result<AgentToolResult, ToolError> {
    if out.cancelled {
        return Err(ToolError::new(append_status(&out.formatted(""), "Command aborted")));
    }
    if out.timed_out {
        let secs = timeout_secs.map(js_number).unwrap_or_default();
        let status = format!("Command timed out after {secs} seconds");
        return Err(ToolError::new(append_status(&out.formatted(""), &status)));
    }
    let text = out.formatted("(no output)");
    match out.exit_code {
        Some(code) if code != 0 => {
            Err(ToolError::new(append_status(&text, &format!("Command exited with code {code}"))))
        }
        _ => Ok(AgentToolResult {
            content: vec![UserContent::text(text)],
            details: details(&out.truncation, out.full_output_path.as_deref()),
            ..AgentToolResult::default()
        }),
    }
}

/// bash's result with pi 1.5's `structuredContent`: a non-zero exit is a result flagged `isError` (carrying the
/// record) rather than an error; aborts and timeouts stay errors. Level 0.73 drops the record and turns the
/// flag back into an error (see the agent loop).
fn structured_command_result(
    out: &BashOutput,
    timeout_secs: Option<f64>,
    wall_time: Duration,
) -> Result<AgentToolResult, ToolError> {
    if out.cancelled || out.timed_out {
        return command_result(out, timeout_secs);
    }
    let mut text = out.formatted("(no output)");
    let failed = matches!(out.exit_code, Some(code) if code != 0);
    if let Some(code) = out.exit_code.filter(|_| failed) {
        text = append_status(&text, &format!("Command exited with code {code}"));
    }
    Ok(AgentToolResult {
        content: vec![UserContent::text(text)],
        details: details(&out.truncation, out.full_output_path.as_deref()),
        structured_content: Some(super::bash_structured::structured_content(out, wall_time)),
        is_error: failed.then_some(true),
    })
}

/// `text`, a blank line and `status`; just `status` when there is no text.
fn append_status(text: &str, status: &str) -> String {
    if text.is_empty() { status.to_owned() } else { format!("{text}\n\n{status}") }
}

/// The `details` of a bash result: present only when the output was truncated.
pub(crate) fn details(truncation: &TruncationResult, full_output_path: Option<&Path>) -> Option<Value> {
    truncation.truncated.then(|| {
        let mut value = json!({ "truncation": truncation });
        if let (Some(map), Some(path)) = (value.as_object_mut(), full_output_path) {
            map.insert("fullOutputPath".into(), Value::String(path.display().to_string()));
        }
        value
    })
}

/// What a finished (or stopped) command produced.
#[derive(Debug, Clone)]
pub struct BashOutput {
    /// The exit code; `None` when the shell was ended by a signal.
    pub exit_code: Option<i32>,
    /// Stopped because the cancellation token fired.
    pub cancelled: bool,
    /// Stopped because the timeout passed.
    pub timed_out: bool,
    /// The tail-truncated output; `total_lines`/`total_bytes` count the whole output.
    pub truncation: TruncationResult,
    /// Where the complete output was saved, when it was truncated.
    pub full_output_path: Option<PathBuf>,
    /// Size of the output's last line, in bytes.
    pub last_line_bytes: usize,
}

impl BashOutput {
    /// The output text with pi's truncation notice, or `empty` when there was no output.
    pub fn formatted(&self, empty: &str) -> String {
        let t = &self.truncation;
        let mut text = if t.content.is_empty() { empty.to_owned() } else { t.content.clone() };
        if t.truncated {
            let full =
                self.full_output_path.as_ref().map_or_else(|| "undefined".to_owned(), |p| p.display().to_string());
            let end = t.total_lines;
            let start = end + 1 - t.output_lines.min(end);
            let notice = if t.last_line_partial {
                format!(
                    "[Showing last {} of line {end} (line is {}). Full output: {full}]",
                    format_size(t.output_bytes),
                    format_size(self.last_line_bytes)
                )
            } else if t.truncated_by == Some(TruncatedBy::Lines) {
                format!("[Showing lines {start}-{end} of {}. Full output: {full}]", t.total_lines)
            } else {
                format!(
                    "[Showing lines {start}-{end} of {} ({} limit). Full output: {full}]",
                    t.total_lines,
                    format_size(DEFAULT_MAX_BYTES)
                )
            };
            text.push_str("\n\n");
            text.push_str(&notice);
        }
        text
    }
}

/// Collects output: counts everything, keeps the recent part in memory and spills it all to a temp file once
/// it is over the byte limit.
struct OutputAccumulator {
    recent: Vec<u8>,
    total_bytes: usize,
    newlines: usize,
    last_line_bytes: usize,
    spill: Option<(PathBuf, std::fs::File)>,
    spill_failed: bool,
}

impl OutputAccumulator {
    fn new() -> Self {
        Self { recent: Vec::new(), total_bytes: 0, newlines: 0, last_line_bytes: 0, spill: None, spill_failed: false }
    }

    fn push(&mut self, chunk: &[u8]) {
        self.total_bytes += chunk.len();
        self.newlines += chunk.iter().filter(|b| **b == b'\n').count();
        self.last_line_bytes = match chunk.iter().rposition(|b| *b == b'\n') {
            Some(pos) => chunk.len() - pos - 1,
            None => self.last_line_bytes + chunk.len(),
        };
        self.recent.extend_from_slice(chunk);
        if let Some((_, file)) = &mut self.spill {
            let _ = file.write_all(chunk);
        } else if self.total_bytes > DEFAULT_MAX_BYTES {
            self.open_spill();
        }
        if self.recent.len() > 4 * KEEP_BYTES {
            let cut = self.recent.len() - KEEP_BYTES;
            self.recent.drain(..cut);
        }
    }

    /// Creates `$TMPDIR/pi-bash-<16 hex>.log` holding everything so far (only called before `recent` is trimmed).
    fn open_spill(&mut self) {
        if self.spill.is_some() || self.spill_failed {
            return;
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        let path = std::env::temp_dir().join(format!("pi-bash-{}.log", &id[..16]));
        let opened = std::fs::File::create(&path).and_then(|mut f| f.write_all(&self.recent).map(|()| f));
        match opened {
            Ok(file) => self.spill = Some((path, file)),
            Err(_) => self.spill_failed = true,
        }
    }

    fn snapshot(&self) -> TruncationResult {
        let text = String::from_utf8_lossy(&self.recent);
        let mut t = truncate_tail(&text, TruncationOptions::default());
        t.total_lines = self.newlines + 1;
        t.total_bytes = self.total_bytes;
        t
    }

    fn spill_path(&self) -> Option<&Path> {
        self.spill.as_ref().map(|(p, _)| p.as_path())
    }
}

/// Kills the command's process group when dropped while still armed (e.g. the tool future was dropped), and
/// keeps the group in the registry of running groups ([`super::process_groups`]) while armed, so leaving the
/// agent kills it too. Shared by every child the runtime runs in its own process group (bash, command tools,
/// command hooks).
pub(crate) struct GroupKiller {
    /// `None` once disarmed.
    pgid: Option<i32>,
}

impl GroupKiller {
    /// Armed for `child`, which must have been spawned with `process_group(0)`.
    pub(crate) fn for_child(child: &tokio::process::Child) -> Self {
        let pgid = child.id().and_then(|id| i32::try_from(id).ok()).filter(|pgid| *pgid > 0);
        if let Some(pgid) = pgid {
            process_groups::register(pgid);
        }
        Self { pgid }
    }

    pub(crate) fn kill(&self) {
        if let Some(pgid) = self.pgid {
            process_groups::kill_group(pgid);
        }
    }

    /// Lets the group go: the shell has exited (what it left running in the background is not ours to kill),
    /// or the group was killed already.
    pub(crate) fn disarm(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            process_groups::forget(pgid);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
        self.disarm();
    }
}

/// Where and how a command runs: the shell, its working directory and its `PATH`.
#[derive(Debug, Clone)]
pub struct ShellCommand {
    pub shell: PathBuf,
    pub cwd: PathBuf,
    /// Put in front of the inherited `PATH` when set.
    pub bin_dir: Option<PathBuf>,
}

impl ShellCommand {
    /// The default shell in `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self { shell: default_shell(), cwd: cwd.into(), bin_dir: None }
    }

    /// The shell the environment asks for; a configured shell that does not exist is an error.
    pub fn for_env(env: &ToolEnvironment) -> Result<Self, ToolError> {
        let shell = match env.shell_path.as_deref().filter(|path| !path.as_os_str().is_empty()) {
            Some(custom) if custom.exists() => custom.to_path_buf(),
            Some(custom) => {
                return Err(ToolError::new(format!(
                    "The shell set as shellPath in settings.json does not exist: {}",
                    custom.display()
                )));
            }
            None => default_shell(),
        };
        Ok(Self { shell, cwd: env.cwd.clone(), bin_dir: env.bin_dir.clone() })
    }

    /// `PATH` with `bin_dir` in front (unless it is already listed), or `None` to inherit it unchanged.
    pub(crate) fn path_env(&self) -> Option<std::ffi::OsString> {
        let bin_dir = self.bin_dir.as_ref()?;
        let current = std::env::var_os("PATH").unwrap_or_default();
        if std::env::split_paths(&current).any(|dir| &dir == bin_dir) {
            return None;
        }
        let dirs = std::iter::once(bin_dir.clone())
            .chain(std::env::split_paths(&current).filter(|d| !d.as_os_str().is_empty()));
        std::env::join_paths(dirs).ok()
    }
}

/// The shell pi picks: `/bin/bash`, else `bash` on PATH, else `sh`.
fn default_shell() -> PathBuf {
    let default = PathBuf::from("/bin/bash");
    if default.exists() {
        return default;
    }
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join("bash")).find(|p| p.is_file()))
        .unwrap_or_else(|| PathBuf::from("sh"))
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Runs `command` with `<shell> -c` in the shell's working directory, in a new process group, stdout and stderr sharing one pipe so their
/// order is kept. `on_update` gets the tail-truncated output as it grows (throttled). On timeout or
/// cancellation the whole process group is killed with SIGKILL. Once the shell has exited, output is read for
/// a short grace period only, so background processes holding the pipe cannot keep the call waiting.
pub async fn run_command(
    command: &str,
    shell: &ShellCommand,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
    on_update: impl FnMut(&TruncationResult, Option<&Path>),
) -> Result<BashOutput, ToolError> {
    run_command_with(command, shell, &RunOptions::default(), timeout, cancel, on_update).await
}

/// Runs `command` for a tool call as bash does: abort check, streamed partial output, the environment's
/// command prefix and shell, and bash's result (truncation notice, exit code and timeout errors).
pub(crate) async fn execute_in_shell(
    env: &ToolEnvironment,
    command: String,
    options: &RunOptions,
    timeout_secs: Option<f64>,
    ctx: &ToolContext,
) -> Result<AgentToolResult, ToolError> {
    let out = run_in_shell(env, command, options, timeout_secs, ctx).await?;
    command_result(&out, timeout_secs)
}

/// Runs `command` as [`execute_in_shell`] does and returns what it produced.
async fn run_in_shell(
    env: &ToolEnvironment,
    command: String,
    options: &RunOptions,
    timeout_secs: Option<f64>,
    ctx: &ToolContext,
) -> Result<BashOutput, ToolError> {
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::new("Command aborted"));
    }
    ctx.update(AgentToolResult { content: Vec::new(), details: None, ..AgentToolResult::default() });
    let on_update = |t: &TruncationResult, full: Option<&Path>| {
        ctx.update(AgentToolResult {
            content: vec![UserContent::text(t.content.clone())],
            details: details(t, full),
            ..AgentToolResult::default()
        });
    };
    let command = with_command_prefix(env, &command);
    let shell = ShellCommand::for_env(env)?;
    let timeout = timeout_secs.and_then(|t| Duration::try_from_secs_f64(t).ok());
    run_command_with(&command, &shell, options, timeout, &ctx.cancel, on_update).await
}

/// `command` preceded by the environment's `shellCommandPrefix` line, when one is set.
pub fn with_command_prefix(env: &ToolEnvironment, command: &str) -> String {
    match env.command_prefix.as_deref().filter(|prefix| !prefix.is_empty()) {
        Some(prefix) => format!("{prefix}\n{command}"),
        None => command.to_owned(),
    }
}

/// Extra inputs of a command run by [`run_command_with`].
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Written to the command's stdin, which is then closed (`None`: stdin is `/dev/null`). A command that
    /// does not read it is not an error.
    pub stdin: Option<Vec<u8>>,
    /// Environment variables set for the command, on top of the inherited ones.
    pub env: Vec<(String, String)>,
    /// Words passed after `-c <command>`: `$0` first, then the positional parameters `$1`, `$2`, ...
    /// (empty: none).
    pub argv: Vec<String>,
}

/// [`run_command`] with stdin contents and extra environment variables.
pub async fn run_command_with(
    command: &str,
    shell: &ShellCommand,
    options: &RunOptions,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
    mut on_update: impl FnMut(&TruncationResult, Option<&Path>),
) -> Result<BashOutput, ToolError> {
    let cwd = &shell.cwd;
    if !cwd.is_dir() {
        return Err(ToolError::new(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            cwd.display()
        )));
    }
    let io_err = |what: &str, e: std::io::Error| ToolError::new(format!("Failed to {what}: {e}"));
    let (reader, writer) = std::io::pipe().map_err(|e| io_err("create output pipe", e))?;
    let mut child = {
        let writer_err = writer.try_clone().map_err(|e| io_err("create output pipe", e))?;
        let mut cmd = tokio::process::Command::new(&shell.shell);
        if let Some(path) = shell.path_env() {
            cmd.env("PATH", path);
        }
        cmd.arg("-c")
            .arg(command)
            .args(&options.argv)
            .current_dir(cwd)
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .stdin(if options.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(writer_err))
            .process_group(0);
        // `cmd` is dropped at the end of this block, closing our copies of the pipe's write end.
        cmd.spawn().map_err(|e| io_err("start bash", e))?
    };
    let mut killer = GroupKiller::for_child(&child);
    let mut rx = pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(|e| io_err("read output", e))?;
    let child_stdin = child.stdin.take();
    // Dropping the pipe (when the write is done, or with this future when the run ends) closes the command's
    // stdin. A command that exits without reading makes the write fail with EPIPE, which is ignored.
    let feed_stdin = async move {
        if let (Some(mut pipe), Some(bytes)) = (child_stdin, options.stdin.as_deref()) {
            let _ = pipe.write_all(bytes).await;
        }
    };
    tokio::pin!(feed_stdin);
    let mut stdin_done = false;

    let mut acc = OutputAccumulator::new();
    let mut buf = vec![0u8; 16 * 1024];
    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
    let (mut cancelled, mut timed_out) = (false, false);
    let mut status: Option<std::process::ExitStatus> = None;
    let mut eof = false;
    let mut drain_until: Option<Instant> = None;
    let mut last_emit: Option<Instant> = None;
    let mut dirty = false;

    while !(eof && status.is_some()) {
        let stopping = cancelled || timed_out || status.is_some();
        let emit_at = if dirty { last_emit.map(|t| t + UPDATE_THROTTLE) } else { None };
        tokio::select! {
            biased;
            _ = cancel.cancelled(), if !stopping => {
                killer.kill();
                cancelled = true;
            }
            _ = sleep_until_opt(deadline), if !stopping && deadline.is_some() => {
                killer.kill();
                timed_out = true;
            }
            _ = sleep_until_opt(drain_until), if drain_until.is_some() && !eof => break,
            exit = child.wait(), if status.is_none() => {
                let exit = exit.map_err(|e| io_err("wait for bash", e))?;
                status = Some(exit);
                // The shell is gone: background processes it left running are not ours to kill.
                killer.disarm();
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            read = rx.read(&mut buf), if !eof => match read {
                Ok(0) => eof = true,
                Ok(n) => {
                    acc.push(&buf[..n]);
                    dirty = true;
                    if last_emit.is_none_or(|t| t.elapsed() >= UPDATE_THROTTLE) {
                        on_update(&acc.snapshot(), acc.spill_path());
                        last_emit = Some(Instant::now());
                        dirty = false;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => eof = true,
            },
            _ = sleep_until_opt(emit_at), if emit_at.is_some() => {
                on_update(&acc.snapshot(), acc.spill_path());
                last_emit = Some(Instant::now());
                dirty = false;
            }
            () = &mut feed_stdin, if !stdin_done => stdin_done = true,
        }
    }
    drop(rx);
    if dirty {
        on_update(&acc.snapshot(), acc.spill_path());
    }
    let truncation = acc.snapshot();
    if truncation.truncated {
        acc.open_spill();
    }
    if let Some((_, file)) = &mut acc.spill {
        let _ = file.flush();
    }
    Ok(BashOutput {
        exit_code: status.and_then(|s| s.code()),
        cancelled,
        timed_out,
        full_output_path: acc.spill_path().map(Path::to_path_buf),
        last_line_bytes: acc.last_line_bytes,
        truncation,
    })
}
