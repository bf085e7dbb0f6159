//! Which session a run uses, chosen as pi chooses: `--no-session` (in memory), `--session PATH|ID-PREFIX`,
//! `-r` (pick one), `-c` (the newest of this directory), else a new one; in `--session-dir`, the agent's
//! session-dir environment variable, or `<agent dir>/sessions/--<cwd>--/`.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};

use super::args::CliArgs;
use super::error::CliError;
use super::paths::expand_home;
use crate::AgentDefinition;
use crate::session::{SessionHeader, SessionManager, list_session_files, read_session_header, sessions_dir};

/// The environment variable that overrides where sessions go: the agent-dir variable with `_DIR` replaced by
/// `_SESSION_DIR` (`PI_CODING_AGENT_DIR` → `PI_CODING_AGENT_SESSION_DIR`).
pub fn session_dir_env(definition: &AgentDefinition) -> String {
    let stem = definition.agent_dir_env.strip_suffix("_DIR").unwrap_or(&definition.agent_dir_env);
    format!("{stem}_SESSION_DIR")
}

/// Opens (or creates) the session `args` ask for.
pub fn open_session(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
) -> Result<SessionManager, CliError> {
    if args.no_session {
        return Ok(SessionManager::in_memory(cwd));
    }
    let override_dir = args.session_dir.as_deref().map(|dir| expand_home(Path::new(dir))).or_else(|| {
        std::env::var_os(session_dir_env(definition))
            .filter(|value| !value.is_empty())
            .map(|value| expand_home(Path::new(&value)))
    });
    let dir = sessions_dir(agent_dir, override_dir.as_deref(), cwd);
    if let Some(wanted) = &args.session {
        let path = resolve_session_arg(wanted, &dir, agent_dir)?;
        return Ok(SessionManager::open(&path)?);
    }
    if args.resume {
        let path = choose_session(&dir)?;
        return Ok(SessionManager::open(&path)?);
    }
    if args.continue_session {
        return Ok(SessionManager::continue_recent(&dir, cwd)?);
    }
    Ok(SessionManager::create(&dir, cwd)?)
}

/// A path when the argument looks like one (has a slash or ends in `.jsonl`), else the newest session of
/// this directory whose id starts with it; a match in another project's folder is reported, not opened.
fn resolve_session_arg(wanted: &str, dir: &Path, agent_dir: &Path) -> Result<PathBuf, CliError> {
    if wanted.contains('/') || wanted.contains('\\') || wanted.ends_with(".jsonl") {
        return Ok(expand_home(Path::new(wanted)));
    }
    if let Some((path, _)) = sessions_in(dir).into_iter().find(|(_, header)| header.id.starts_with(wanted)) {
        return Ok(path);
    }
    let all_projects = std::fs::read_dir(agent_dir.join("sessions")).into_iter().flatten().flatten();
    for project in all_projects.map(|entry| entry.path()).filter(|path| path.is_dir() && path != dir) {
        if let Some((path, header)) = sessions_in(&project).into_iter().find(|(_, h)| h.id.starts_with(wanted)) {
            return Err(CliError::SessionInOtherProject { id: header.id, cwd: header.cwd, path });
        }
    }
    Err(CliError::SessionNotFound(wanted.to_owned()))
}

/// The sessions in `dir` with their headers, newest first.
fn sessions_in(dir: &Path) -> Vec<(PathBuf, SessionHeader)> {
    list_session_files(dir)
        .into_iter()
        .filter_map(|(path, _)| read_session_header(&path).map(|header| (path, header)))
        .collect()
}

/// Lists this directory's sessions on the terminal and reads the number of the one to resume.
fn choose_session(dir: &Path) -> Result<PathBuf, CliError> {
    let sessions = sessions_in(dir);
    if sessions.is_empty() {
        return Err(CliError::SessionNotFound("(any session of this directory)".to_owned()));
    }
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| {
        CliError::Usage("-r needs a terminal to choose a session; pass --session <id> or -c instead".to_owned())
    })?;
    let mut out = &tty;
    for (number, (path, header)) in sessions.iter().enumerate().take(20) {
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = writeln!(out, "{:>3}. {}  {}", number + 1, header.timestamp, name);
    }
    let _ = write!(out, "Session number: ");
    let _ = out.flush();
    let mut answer = String::new();
    std::io::BufReader::new(&tty).read_line(&mut answer).map_err(|_| CliError::NoSessionChosen)?;
    let index = answer.trim().parse::<usize>().ok().and_then(|n| n.checked_sub(1)).ok_or(CliError::NoSessionChosen)?;
    sessions.into_iter().nth(index).map(|(path, _)| path).ok_or(CliError::NoSessionChosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_dir_variable_follows_the_agent_dir_variable() {
        assert_eq!(session_dir_env(&AgentDefinition::default()), "PI_CODING_AGENT_SESSION_DIR");
        let custom = AgentDefinition { agent_dir_env: "SCOUT_HOME".into(), ..AgentDefinition::default() };
        assert_eq!(session_dir_env(&custom), "SCOUT_HOME_SESSION_DIR");
    }
}
