//! `<agent> submit`: sends prompts to a session that runs on Temporal (a new one unless `--session` names
//! one) and prints its events as `--mode json` prints them (the session header first), until the prompts'
//! runs have ended. Any machine with the cluster's addresses can submit; the workers do the work.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Parser;

use crate::client::{SessionClient, SessionSettings};
use crate::flow::SessionInput;
use crate::store::{SessionLines, SessionStore};
use crate::worker::{ClusterArgs, ClusterError};

#[derive(Debug, Parser)]
#[command(no_binary_name = true, about = "Send prompts to a session on Temporal and print its events as JSON lines")]
pub(super) struct SubmitArgs {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Continue this session (default: a new one)
    #[arg(long)]
    session: Option<String>,
    /// The session's working directory (a new session; default: the current directory)
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// The workspace whose workers run the session's tools
    #[arg(long, default_value = "default")]
    workspace: String,
    /// Seconds without a heartbeat after which a step's worker is taken as dead (a new session; default 10)
    #[arg(long)]
    heartbeat_timeout: Option<u64>,
    /// Turns after which the session's workflow continues as new, between runs, keeping its history short
    /// (a new session; default 100)
    #[arg(long)]
    turns_per_run: Option<u32>,
    /// The provider, as the agent's --provider
    #[arg(long)]
    provider: Option<String>,
    /// The model, as the agent's --model
    #[arg(long)]
    model: Option<String>,
    /// The thinking level, as the agent's --thinking
    #[arg(long)]
    thinking: Option<String>,
    /// Any other flag of the agent for this session (repeat it: --flag=--tools --flag=read,bash)
    #[arg(long = "flag", allow_hyphen_values = true)]
    flags: Vec<String>,
    /// Abort what the session (--session) is doing instead: the step under way stops, as pi's abort stops it
    #[arg(long, requires = "session", conflicts_with = "messages")]
    abort: bool,
    /// The prompts, run one after another
    #[arg(required_unless_present = "abort")]
    messages: Vec<String>,
}

/// Runs `<agent> submit ARGS`.
pub(super) async fn submit(agent: String, args: SubmitArgs) -> Result<(), ClusterError> {
    let client = SessionClient::connect(&args.cluster, &agent).await?;
    let id = match &args.session {
        Some(id) => id.clone(),
        None => {
            let cwd = match &args.cwd {
                Some(cwd) => cwd.clone(),
                None => std::env::current_dir().map_err(|error| ClusterError::Worker(error.to_string()))?,
            };
            client.create(&cwd, None).await?
        }
    };
    let settings = SessionSettings {
        argv: agent_flags(&args),
        workspace: args.workspace.clone(),
        heartbeat_timeout_secs: args.heartbeat_timeout,
        turns_per_run: args.turns_per_run,
    };
    if args.abort {
        return client.send(&id, &settings, SessionInput::Abort).await;
    }
    let stored = client.store().export(&id).await?.ok_or_else(|| ClusterError::Worker(format!("no session {id}")))?;
    print_line(&SessionLines::parse(&stored)?.header.text);
    // Where the session's events stand now: only what the new prompts bring is printed.
    let runs = client.status(&id).await.map_or(0, |status| status.runs);
    let mut watch = client.bus().watch(&id, client.bus().last_number(&id).await?).await?;
    let wanted = args.messages.len();
    for text in args.messages {
        client.send(&id, &settings, SessionInput::Prompt { text, images: Vec::new(), idempotency_key: None }).await?;
    }
    let mut ended = 0;
    while ended < wanted {
        let Some(event) = watch.next().await else { break };
        let (_, line) = event?;
        print_line(&line);
        if line.starts_with(r#"{"type":"agent_end""#) {
            ended += 1;
        }
    }
    // What the runs' last steps emit after `agent_end` (pi 1.5's `agent_settled`) is kept by the time
    // the workflow counts the runs ended.
    client.wait_for_runs(&id, runs + wanted as u64).await?;
    for (_, line) in watch.kept_since().await? {
        print_line(&line);
    }
    Ok(())
}

/// The agent's flags for the session.
fn agent_flags(args: &SubmitArgs) -> Vec<String> {
    let mut flags = Vec::new();
    for (name, value) in [("--provider", &args.provider), ("--model", &args.model), ("--thinking", &args.thinking)] {
        if let Some(value) = value {
            flags.extend([name.to_owned(), value.clone()]);
        }
    }
    flags.extend(args.flags.iter().cloned());
    flags
}

fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}
