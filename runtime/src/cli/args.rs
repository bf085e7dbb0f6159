//! Command-line arguments, with pi's flag names (including its single-dash multi-letter aliases).

use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};

use crate::AgentDefinition;

/// Output mode (`--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[non_exhaustive]
pub enum OutputMode {
    Text,
    Json,
    Rpc,
}

/// How interactive mode uses the terminal (`--tui-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[non_exhaustive]
pub enum TuiMode {
    /// Inline: the conversation joins the terminal's scrollback.
    Regular,
    /// The alternate screen, with the conversation scrolled by the program.
    Fullscreen,
}

/// The parsed command line.
#[derive(Debug, Clone, Default, Parser)]
#[command(disable_version_flag = true, disable_help_flag = true)]
pub struct CliArgs {
    /// Provider name (defaults to the agent's provider, then the first configured one)
    #[arg(long, value_name = "name")]
    pub provider: Option<String>,
    /// Model pattern or ID (supports "provider/id" and an optional ":<thinking>")
    #[arg(long, value_name = "pattern")]
    pub model: Option<String>,
    /// Comma-separated model patterns for Ctrl+P cycling (globs such as anthropic/* or *sonnet*, fuzzy names,
    /// an optional ":<thinking>"); the first is the start model when nothing else names one
    #[arg(long, value_name = "patterns")]
    pub models: Option<String>,
    /// API key (defaults to environment variables and models.json)
    #[arg(long = "api-key", value_name = "key")]
    pub api_key: Option<String>,
    /// System prompt text, or a file whose contents become the system prompt
    #[arg(long = "system-prompt", value_name = "text")]
    pub system_prompt: Option<String>,
    /// Text or file contents appended to the system prompt (repeatable)
    #[arg(long = "append-system-prompt", value_name = "text")]
    pub append_system_prompt: Vec<String>,
    /// Output mode: text (default), json, or rpc
    #[arg(long, value_enum, value_name = "mode")]
    pub mode: Option<OutputMode>,
    /// Interactive display: regular (inline, default) or fullscreen; overrides the tuiMode setting
    #[arg(long = "tui-mode", value_enum, value_name = "mode")]
    pub tui_mode: Option<TuiMode>,
    /// Non-interactive mode: process the prompt and exit
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Don't save the session (in-memory only)
    #[arg(long = "no-session")]
    pub no_session: bool,
    /// Continue the most recent session of this directory
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,
    /// Choose a session of this directory to resume
    #[arg(short = 'r', long = "resume")]
    pub resume: bool,
    /// Use this session file, or the session whose id starts with this
    #[arg(long = "session", value_name = "path|id")]
    pub session: Option<String>,
    /// Use this directory's session with exactly this id, or start a new session with it
    #[arg(long = "session-id", value_name = "id", value_parser = parse_session_id)]
    pub session_id: Option<String>,
    /// Name the session (shown when choosing sessions; `-n` for short)
    #[arg(long = "name", value_name = "name", value_parser = parse_session_name)]
    pub name: Option<String>,
    /// Copy this session file (or the session whose id starts with this, of any project) into a new session
    /// of this directory and continue there
    #[arg(long = "fork", value_name = "path|id")]
    pub fork: Option<String>,
    /// Directory to read and write session files in
    #[arg(long = "session-dir", value_name = "dir")]
    pub session_dir: Option<String>,
    /// Comma-separated tool names or patterns (* matches anything) to enable; only +name/-name entries add
    /// to or remove from the defaults instead; MCP tools stay only when an entry names them (mcp__server__*)
    #[arg(short = 't', long = "tools", value_name = "tools", value_delimiter = ',', allow_hyphen_values = true)]
    pub tools: Option<Vec<String>>,
    /// Comma-separated tool names or patterns (*) to disable (`-xt` for short)
    #[arg(
        long = "exclude-tools",
        value_name = "tools",
        value_delimiter = ',',
        allow_hyphen_values = true,
        overrides_with = "exclude_tools"
    )]
    pub exclude_tools: Option<Vec<String>>,
    /// Disable all tools
    #[arg(long = "no-tools")]
    pub no_tools: bool,
    /// Reproduce this pi release's events, session entries, system prompt and requests: 0.73 or 1.5
    /// (default: the agent's own, or the piCompat setting)
    #[arg(long = "pi-compat", value_name = "0.73|1.5")]
    pub pi_compat: Option<crate::protocol::PiCompat>,
    /// Trust the project's own files for this run (pi 1.5: `-a` for short)
    #[arg(long = "approve", overrides_with = "no_approve")]
    pub approve: bool,
    /// Ignore the project's own files for this run (pi 1.5: `-na` for short)
    #[arg(long = "no-approve", overrides_with = "approve")]
    pub no_approve: bool,
    /// Whether this run uses the project's own files, once decided (`None`: they are used, as in pi 0.73).
    #[arg(skip)]
    pub project_trusted: Option<bool>,
    /// Allow every tool call the permissions would ask about, without asking (denied calls stay denied)
    #[arg(long = "approve-all")]
    pub approve_all: bool,
    /// Models to try, in order, when the model fails with an error that is not retried or its retries are
    /// used up: provider/id with an optional ":<thinking>" (comma-separated or repeated; before the agent's)
    #[arg(long = "fallback-model", value_name = "provider/id", value_delimiter = ',')]
    pub fallback_models: Vec<String>,
    /// Disable MCP: no servers start and no MCP tools
    #[arg(long = "no-mcp")]
    pub no_mcp: bool,
    /// Load a skill file or directory (repeatable)
    #[arg(long = "skill", value_name = "path")]
    pub skills: Vec<String>,
    /// Do not discover skills (explicit --skill paths still load)
    #[arg(long = "no-skills")]
    pub no_skills: bool,
    /// Load a prompt template file or directory (repeatable)
    #[arg(long = "prompt-template", value_name = "path")]
    pub prompt_templates: Vec<String>,
    /// Do not discover prompt templates (explicit --prompt-template paths still load)
    #[arg(long = "no-prompt-templates")]
    pub no_prompt_templates: bool,
    /// Do not load AGENTS.md / CLAUDE.md context files
    #[arg(long = "no-context-files")]
    pub no_context_files: bool,
    /// Write a session file as an HTML page and exit (the first message, if any, names the output file)
    #[arg(long, value_name = "file")]
    pub export: Option<String>,
    /// Save every model response of this run to <file> in the mock server's script format, for replay
    /// with `pi-gen mock-llm --script` or `pi-gen test`
    #[arg(long, value_name = "file")]
    pub record: Option<std::path::PathBuf>,
    /// Thinking level: off, minimal, low, medium, high, xhigh (and max at level 1.5)
    #[arg(long, value_name = "level")]
    pub thinking: Option<String>,
    /// List the models that have an API key (optionally fuzzy-filtered by a search)
    #[arg(long = "list-models", value_name = "search", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,
    /// Show this help
    #[arg(short = 'h', long = "help")]
    pub help: bool,
    /// Show the version number
    #[arg(short = 'v', long = "version")]
    pub version: bool,
    /// Messages to send, in order
    #[arg(value_name = "messages")]
    pub messages: Vec<String>,
}

impl CliArgs {
    /// `--approve` / `--no-approve`, whichever came last.
    pub fn trust_flag(&self) -> Option<bool> {
        if self.approve {
            Some(true)
        } else if self.no_approve {
            Some(false)
        } else {
            None
        }
    }

    /// Whether the project's own files (settings, MCP servers, skills, templates, SYSTEM.md) are used: not
    /// when pi 1.5's project trust decided against them.
    pub fn uses_project_files(&self) -> bool {
        self.project_trusted != Some(false)
    }
}

/// pi's single-dash multi-letter flags, rewritten to their long forms before clap sees them.
const SINGLE_DASH_ALIASES: [(&str, &str); 8] = [
    ("-a", "--approve"),
    ("-na", "--no-approve"),
    ("-nt", "--no-tools"),
    ("-ns", "--no-skills"),
    ("-np", "--no-prompt-templates"),
    ("-nc", "--no-context-files"),
    ("-xt", "--exclude-tools"),
    ("-n", "--name"),
];

/// Parses `args` (without the program name) for the agent `definition`.
pub fn parse_args(
    definition: &AgentDefinition,
    args: impl IntoIterator<Item = String>,
) -> Result<CliArgs, clap::Error> {
    let mut rewritten = vec![definition.name.clone()];
    let mut after_separator = false;
    for arg in args {
        if !after_separator {
            if arg == "--" {
                after_separator = true;
            } else if let Some((_, long)) = SINGLE_DASH_ALIASES.iter().find(|(short, _)| *short == arg) {
                rewritten.push((*long).to_owned());
                continue;
            }
        }
        rewritten.push(arg);
    }
    let matches = command(definition).try_get_matches_from(rewritten)?;
    let args = CliArgs::from_arg_matches(&matches)?;
    if let Err(message) = super::custom_tools::tool_list(args.tools.as_deref()) {
        return Err(command(definition).error(clap::error::ErrorKind::ValueValidation, message));
    }
    Ok(args)
}

/// A `--session-id`: letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit.
fn parse_session_id(id: &str) -> Result<String, String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let ends_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if id.chars().all(allowed) && ends_ok(id.chars().next()) && ends_ok(id.chars().last()) {
        Ok(id.to_owned())
    } else {
        Err("a session id is letters, digits, '-', '_' and '.', and starts and ends with a letter or digit".into())
    }
}

/// A `--name`: not blank; kept without surrounding whitespace.
fn parse_session_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() { Err("a session name cannot be empty".into()) } else { Ok(name.to_owned()) }
}

/// The clap command, named and described after the agent.
pub fn command(definition: &AgentDefinition) -> clap::Command {
    CliArgs::command()
        .name(definition.name.clone())
        .bin_name(definition.name.clone())
        .about(definition.description.clone())
        .override_usage(format!("{} [options] [messages...]", definition.name))
        .after_help(format!("{}\n\n{}", commands_help(definition), environment_help(definition)))
}

/// The help's list of the subcommands.
fn commands_help(definition: &AgentDefinition) -> String {
    let name = &definition.name;
    format!(
        "Commands:\n  {name} login [provider]   Log in with a subscription (anthropic, openai-codex, github-copilot)\n  \
         {name} logout [provider]  Forget a subscription login\n  \
         {name} mcp list [--json]  Start the MCP servers and list them with their tools"
    )
}

/// The help's list of the agent's own environment variables.
fn environment_help(definition: &AgentDefinition) -> String {
    let agent_dir = &definition.agent_dir_env;
    let session_dir = super::session_select::session_dir_env(definition);
    let timeout = super::setup::STREAM_IDLE_TIMEOUT_ENV;
    let width = [agent_dir.len(), session_dir.len(), timeout.len()].into_iter().max().unwrap_or(0);
    format!(
        "Environment:\n  {agent_dir:width$}  Global agent directory (default: ~/{}/agent)\n  \
         {session_dir:width$}  Session directory (default: <agent dir>/sessions)\n  \
         {timeout:width$}  Give up on a model stream silent for this many milliseconds",
        definition.config_dir
    )
}

/// The `--help` text.
pub fn help_text(definition: &AgentDefinition) -> String {
    command(definition).render_help().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> CliArgs {
        parse_args(&AgentDefinition::default(), args.iter().map(|a| (*a).to_owned())).expect("parses")
    }

    #[test]
    fn help_lists_the_agents_environment_variables() {
        let help = help_text(&AgentDefinition::default());
        let section = help.split("Environment:\n").nth(1).unwrap_or_default();
        let lines: Vec<&str> = section.lines().map(str::trim_start).collect();
        assert!(lines[0].starts_with("PI_CODING_AGENT_DIR ") && lines[0].ends_with("(default: ~/.pi/agent)"), "{help}");
        assert!(
            lines[1].starts_with("PI_CODING_AGENT_SESSION_DIR ") && lines[1].contains("Session directory"),
            "{help}"
        );
    }

    #[test]
    fn pi_flags_parse() {
        let args = parse(&[
            "--provider",
            "mock",
            "--model",
            "m",
            "--api-key",
            "k",
            "-p",
            "--mode",
            "json",
            "--tools",
            "read,bash",
            "hello",
            "world",
        ]);
        assert_eq!(args.provider.as_deref(), Some("mock"));
        assert_eq!(args.model.as_deref(), Some("m"));
        assert_eq!(args.api_key.as_deref(), Some("k"));
        assert!(args.print);
        assert_eq!(args.mode, Some(OutputMode::Json));
        assert_eq!(args.tools, Some(vec!["read".to_owned(), "bash".to_owned()]));
        assert_eq!(args.messages, vec!["hello", "world"]);
    }

    #[test]
    fn single_dash_aliases_and_short_flags() {
        let args = parse(&["-nt", "-v", "-h"]);
        assert!(args.no_tools && args.version && args.help);
        let args = parse(&["--", "-nt"]);
        assert!(!args.no_tools);
        assert_eq!(args.messages, vec!["-nt"]);
    }

    #[test]
    fn pi_1_5_session_and_tool_flags() {
        let args = parse(&["--session-id", "my-session.1", "-n", "  My  Name ", "-xt", "bash,e*", "--tools", "+grep"]);
        assert_eq!(args.session_id.as_deref(), Some("my-session.1"));
        assert_eq!(args.name.as_deref(), Some("My  Name"));
        assert_eq!(args.exclude_tools, Some(vec!["bash".to_owned(), "e*".to_owned()]));
        assert_eq!(args.tools, Some(vec!["+grep".to_owned()]));
        assert_eq!(parse(&["--name", "x"]).name.as_deref(), Some("x"));
        assert_eq!(parse(&["-xt", "a", "--exclude-tools", "b"]).exclude_tools, Some(vec!["b".to_owned()]));
        let error = |list: &[&str]| {
            parse_args(&AgentDefinition::default(), list.iter().map(|a| (*a).to_owned())).err().map(|e| e.to_string())
        };
        for bad in ["../x", "a b", "", "-a", "a.", "x/y"] {
            assert!(error(&[&format!("--session-id={bad}")]).is_some_and(|e| e.contains("session id")), "{bad}");
        }
        assert!(error(&["--name", "  "]).is_some_and(|e| e.contains("cannot be empty")));
        assert!(error(&["--tools", "read,+grep"]).is_some_and(|e| e.contains("not both")));
        assert!(error(&["--tools", "-*"]).is_some_and(|e| e.contains("exact name")));
        assert!(error(&["-ne"]).is_some(), "-n takes only a separate value");
    }

    #[test]
    fn list_models_takes_an_optional_search() {
        assert_eq!(parse(&["--list-models"]).list_models.as_deref(), Some(""));
        assert_eq!(parse(&["--list-models", "sonnet"]).list_models.as_deref(), Some("sonnet"));
        let args = parse(&["--list-models", "-p"]);
        assert_eq!(args.list_models.as_deref(), Some(""));
        assert!(args.print);
        assert_eq!(parse(&["-p"]).list_models, None);
    }

    #[test]
    fn unknown_flag_is_an_error() {
        let result = parse_args(&AgentDefinition::default(), ["--frobnicate".to_owned()]);
        let message = result.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("--frobnicate"), "{message}");
    }

    #[test]
    fn help_names_the_agent_and_flags() {
        let help = help_text(&AgentDefinition { name: "coder".into(), ..AgentDefinition::default() });
        assert!(help.contains("coder [options]"), "{help}");
        for flag in [
            "--print",
            "--mode",
            "--provider",
            "--model",
            "--api-key",
            "--tools",
            "--no-tools",
            "--version",
            "--list-models",
        ] {
            assert!(help.contains(flag), "missing {flag} in {help}");
        }
    }
}
