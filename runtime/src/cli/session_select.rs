//! Which session a run uses, chosen as pi chooses: `--fork PATH|ID-PREFIX` (a copy in a new session),
//! `--no-session` (in memory), `--session PATH|ID-PREFIX`,
//! `-r` (pick one), `-c` (the newest of this directory), else a new one; in `--session-dir`, the agent's
//! session-dir environment variable, the YAML's `session.dir`, or `<agent dir>/sessions/--<cwd>--/`. An
//! agent whose YAML says `session.enabled: false` runs in memory unless `--session`, `-r` or `-c` asks
//! for a session.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};

use super::args::CliArgs;
use super::error::CliError;
use super::paths::expand_home;
use crate::AgentDefinition;
use crate::session::{
    NewSessionOptions, SessionHeader, SessionManager, list_session_files, read_session_header, sessions_dir,
};

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
    if args.session_id.is_some() {
        let conflicts: Vec<&str> =
            [(args.session.is_some(), "--session"), (args.continue_session, "--continue"), (args.resume, "--resume")]
                .into_iter()
                .filter_map(|(given, flag)| given.then_some(flag))
                .collect();
        if !conflicts.is_empty() {
            return Err(CliError::Usage(format!("--session-id cannot be used with {}", conflicts.join(", "))));
        }
    }
    if let Some(source) = &args.fork {
        let conflicts: Vec<&str> = [
            (args.session.is_some(), "--session"),
            (args.continue_session, "--continue"),
            (args.resume, "--resume"),
            (args.no_session, "--no-session"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect();
        if !conflicts.is_empty() {
            return Err(CliError::Usage(format!(
                "--fork makes a new session of its own; it cannot be used with {}",
                conflicts.join(", ")
            )));
        }
        let override_dir = session_dir_override(definition, args, |name| std::env::var_os(name));
        let dir = sessions_dir(agent_dir, override_dir.as_deref(), cwd);
        let path = match resolve_session_arg(source, &dir, agent_dir) {
            Err(CliError::SessionInOtherProject { path, .. }) => path,
            other => other?,
        };
        return Ok(SessionManager::fork_from(&path, &dir, cwd)?);
    }
    let asks_for_session = args.session.is_some() || args.resume || args.continue_session;
    let with_id = NewSessionOptions { session_id: args.session_id.clone(), parent_session: None };
    if args.no_session || (!definition.session.enabled && !asks_for_session) {
        return Ok(SessionManager::in_memory_with(cwd, with_id));
    }
    let override_dir = session_dir_override(definition, args, |name| std::env::var_os(name));
    let dir = sessions_dir(agent_dir, override_dir.as_deref(), cwd);
    // pi 1.5's `--session-id`: this directory's session with exactly that id, else a new one with it.
    if let Some(id) = &args.session_id {
        if let Some((path, _)) = sessions_in(&dir).into_iter().find(|(_, header)| header.id == *id) {
            return Ok(SessionManager::open(&path)?);
        }
        eprintln!("Warning: this directory has no session with id {id}; starting a new one with that id");
        return Ok(SessionManager::create_with(&dir, cwd, with_id)?);
    }
    if let Some(wanted) = &args.session {
        let path = resolve_session_arg(wanted, &dir, agent_dir)?;
        return Ok(SessionManager::open(&path)?);
    }
    if args.resume {
        let path = choose_session(&dir, agent_dir)?;
        return Ok(SessionManager::open(&path)?);
    }
    if args.continue_session {
        return Ok(SessionManager::continue_recent(&dir, cwd)?);
    }
    Ok(SessionManager::create(&dir, cwd)?)
}

/// The directory sessions go straight into, if any: `--session-dir`, else the agent's session-dir
/// environment variable, else the YAML's `session.dir` (each with `~` expanded).
pub(super) fn session_dir_override(
    definition: &AgentDefinition,
    args: &CliArgs,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let non_empty = |value: &std::ffi::OsStr| (!value.is_empty()).then(|| expand_home(Path::new(value)));
    args.session_dir
        .as_deref()
        .map(|dir| expand_home(Path::new(dir)))
        .or_else(|| env(&session_dir_env(definition)).as_deref().and_then(non_empty))
        .or_else(|| definition.session.dir.as_deref().and_then(|dir| non_empty(dir.as_ref())))
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

/// Lists this directory's sessions on the terminal and reads the number of the one to resume; `a` lists
/// the sessions of every project instead (newest first, each with its directory), as Tab does in pi's
/// selector.
fn choose_session(dir: &Path, agent_dir: &Path) -> Result<PathBuf, CliError> {
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| {
        CliError::Usage("-r needs a terminal to choose a session; pass --session <id> or -c instead".to_owned())
    })?;
    let mut sessions = sessions_in(dir);
    let mut all_projects = false;
    loop {
        let mut out = &tty;
        if sessions.is_empty() && all_projects {
            return Err(CliError::SessionNotFound("(any session)".to_owned()));
        }
        for (number, (path, header)) in sessions.iter().enumerate().take(20) {
            let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
            let place = if all_projects { format!("  {}", header.cwd) } else { String::new() };
            let _ = writeln!(out, "{:>3}. {}  {name}{place}", number + 1, header.timestamp);
        }
        if sessions.is_empty() {
            let _ = writeln!(out, "No sessions in this directory.");
        }
        let question = if all_projects { "Session number: " } else { "Session number (a: every project): " };
        let _ = write!(out, "{question}");
        let _ = out.flush();
        let mut answer = String::new();
        std::io::BufReader::new(&tty).read_line(&mut answer).map_err(|_| CliError::NoSessionChosen)?;
        let answer = answer.trim();
        if answer.eq_ignore_ascii_case("a") && !all_projects {
            all_projects = true;
            sessions = every_projects_sessions(agent_dir);
            continue;
        }
        let index = answer.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).ok_or(CliError::NoSessionChosen)?;
        return sessions.into_iter().nth(index).map(|(path, _)| path).ok_or(CliError::NoSessionChosen);
    }
}

/// The sessions of every project folder under the agent directory, newest first.
fn every_projects_sessions(agent_dir: &Path) -> Vec<(PathBuf, SessionHeader)> {
    let folders = std::fs::read_dir(agent_dir.join("sessions")).into_iter().flatten().flatten();
    let mut sessions: Vec<(PathBuf, SessionHeader)> =
        folders.map(|entry| entry.path()).filter(|path| path.is_dir()).flat_map(|dir| sessions_in(&dir)).collect();
    let modified = |path: &Path| std::fs::metadata(path).and_then(|meta| meta.modified()).ok();
    sessions.sort_by_key(|(path, _)| std::cmp::Reverse(modified(path)));
    sessions
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

    #[test]
    fn the_yaml_session_dir_comes_below_the_flag_and_the_variable() {
        let definition = AgentDefinition {
            session: crate::definition::SessionDefaults { enabled: true, dir: Some("~/scout-sessions".to_owned()) },
            ..AgentDefinition::default()
        };
        let args = |list: &[&str]| {
            crate::cli::args::parse_args(&definition, list.iter().map(|a| (*a).to_owned())).expect("parses")
        };
        let no_env = |_: &str| None;
        let env = |name: &str| (name == "PI_CODING_AGENT_SESSION_DIR").then(|| "/from/env".into());
        let home = crate::cli::paths::home_dir();
        assert_eq!(session_dir_override(&definition, &args(&[]), no_env), Some(home.join("scout-sessions")));
        assert_eq!(session_dir_override(&definition, &args(&[]), env), Some(PathBuf::from("/from/env")));
        let flagged = args(&["--session-dir", "/from/flag"]);
        assert_eq!(session_dir_override(&definition, &flagged, env), Some(PathBuf::from("/from/flag")));
        let empty_env = |_: &str| Some("".into());
        assert_eq!(session_dir_override(&definition, &args(&[]), empty_env), Some(home.join("scout-sessions")));
        assert_eq!(session_dir_override(&AgentDefinition::default(), &args(&[]), no_env), None);
    }
}
