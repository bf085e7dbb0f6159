//! The process groups of the commands running right now (bash tools, command tools, the user's `!command`s,
//! YAML commands and command hooks), so that every way out of the agent can kill what still runs.
//!
//! Each command runs in a process group of its own, so a terminal's Ctrl+C or SIGHUP never reaches it, and
//! nothing kills it when the agent dies. A run that ends normally kills (or lets go of) its group itself; this
//! registry is for the rest: a signal, a panic (generated agents abort on panic, so no destructor runs), or a
//! task that is still waiting when the process leaves.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};

static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn groups() -> MutexGuard<'static, BTreeSet<i32>> {
    GROUPS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Notes a group that runs a command until [`forget`] is called for it.
pub(crate) fn register(pgid: i32) {
    if pgid > 0 {
        groups().insert(pgid);
    }
}

/// The group's command is done with (killed, or its shell exited and what it left behind is not ours).
pub(crate) fn forget(pgid: i32) {
    groups().remove(&pgid);
}

/// Sends SIGKILL to the group `pgid`.
pub(crate) fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

/// Sends `signal` to the group `pgid`.
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid addresses the process group, which
        // the command's shell leads (it was spawned with process_group(0), so its pgid is its pid).
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Kills every group still running a command (with SIGKILL, as an abort does) and forgets them. Safe to call
/// from a signal's aftermath or a panic hook; cheap when nothing runs.
pub fn kill_all_process_groups() {
    let running = std::mem::take(&mut *groups());
    for pgid in running {
        kill_group(pgid);
    }
}

/// Whether `pgid` is noted as running a command (for tests).
#[cfg(test)]
pub(crate) fn is_registered(pgid: i32) -> bool {
    groups().contains(&pgid)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;

    use super::is_registered;
    use crate::tools::bash::{ShellCommand, run_command};

    /// Whether process `pid` still runs (a zombie waiting to be reaped does not).
    fn running(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
            .unwrap_or(false)
    }

    /// Starts `sleep 1000` in a shell and returns the future running it with the shell's pid (its group).
    async fn started(
        dir: &std::path::Path,
        cancel: &CancellationToken,
    ) -> (std::pin::Pin<Box<impl Future<Output = Result<crate::tools::bash::BashOutput, crate::tools::ToolError>>>>, i32)
    {
        let pid_file = dir.join("pid");
        let _ = std::fs::remove_file(&pid_file);
        let command = format!("echo $$ > '{}'; sleep 1000", pid_file.display());
        let shell = ShellCommand::new(dir);
        let mut run = Box::pin(async move { run_command(&command, &shell, None, cancel, |_, _| {}).await });
        loop {
            tokio::select! {
                _ = &mut run => panic!("the command ended early"),
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
            if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|text| text.trim().parse().ok()) {
                return (run, pid);
            }
        }
    }

    #[tokio::test]
    async fn a_command_s_group_is_registered_while_it_runs() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let (run, pgid) = started(dir.path(), &cancel).await;
        assert!(is_registered(pgid), "the running command's group is noted");
        cancel.cancel();
        assert!(run.await.unwrap().cancelled);
        assert!(!is_registered(pgid), "a killed group is forgotten");
        assert!(!running(pgid));

        // Dropping the run (an exit path that does not wait) kills the group and forgets it too.
        let cancel = CancellationToken::new();
        let (run, pgid) = started(dir.path(), &cancel).await;
        drop(run);
        assert!(!is_registered(pgid));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while running(pgid) {
            assert!(std::time::Instant::now() < deadline, "the dropped command still runs");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        // A command that ends by itself is forgotten once its shell exits.
        let shell = ShellCommand::new(dir.path());
        let out = run_command("echo $$", &shell, None, &CancellationToken::new(), |_, _| {}).await.unwrap();
        let pgid: i32 = out.truncation.content.trim().parse().unwrap();
        assert!(!is_registered(pgid));
    }
}
