//! `<agent> store`: the sessions of a store listed, exported, imported, copied to another store, or
//! deleted. A store is a Postgres URL or a folder of session files; the default is the agent's own
//! sessions folder, so `store copy --to postgres://...` moves a machine's sessions into Postgres.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pi_runtime::AgentDefinition;

use crate::store::{AnyStore, SessionLines, SessionStore, StoreError};

#[derive(Debug, Parser)]
#[command(no_binary_name = true, disable_help_subcommand = true)]
struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// List the stored sessions: id, entries, created, working directory
    List {
        /// The store: postgres://USER@HOST:PORT/DATABASE, or a folder (default: the agent's sessions folder)
        #[arg(long)]
        store: Option<String>,
    },
    /// Write a session's file (pi's JSONL, byte for byte) to standard output or a file
    Export {
        /// The session id
        id: String,
        #[arg(long)]
        store: Option<String>,
        /// Write to this file instead of standard output
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Store session files (pi's JSONL) as sessions; an id that is stored already is refused
    Import {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long)]
        store: Option<String>,
    },
    /// Copy sessions from one store to another (all of them unless ids are given); ids stored there are skipped
    Copy {
        /// Only these sessions
        ids: Vec<String>,
        /// Where they are (default: the agent's sessions folder)
        #[arg(long)]
        from: Option<String>,
        /// Where they go
        #[arg(long)]
        to: String,
    },
    /// Delete a session from the store
    Delete {
        id: String,
        #[arg(long)]
        store: Option<String>,
    },
}

/// Runs `store` with the arguments after the word; returns the exit code.
pub(super) fn run_store_command(definition: &AgentDefinition, raw: &[String]) -> ExitCode {
    let default_store = pi_runtime::cli::agent_dir(definition).join("sessions").to_string_lossy().into_owned();
    super::run_subcommand(&definition.name, "store", raw, |args: StoreArgs| async move {
        store_command(args.command, &default_store).await
    })
}

async fn store_command(command: StoreCommand, default_store: &str) -> Result<(), StoreError> {
    let open =
        |address: Option<String>| async move { AnyStore::open(address.as_deref().unwrap_or(default_store)).await };
    match command {
        StoreCommand::List { store } => {
            let mut out = String::new();
            for session in open(store).await?.list().await? {
                out.push_str(&format!("{}\t{}\t{}\t{}\n", session.id, session.entries, session.created, session.cwd));
            }
            print(&out);
        }
        StoreCommand::Export { id, store, output } => {
            let text = open(store).await?.export(&id).await?.ok_or_else(|| StoreError::NotFound(id.clone()))?;
            match output {
                Some(path) => std::fs::write(&path, text)
                    .map_err(|source| StoreError::invalid(format!("cannot write {}: {source}", path.display())))?,
                None => print(&text),
            }
        }
        StoreCommand::Import { files, store } => {
            let store = open(store).await?;
            for file in files {
                let text = std::fs::read_to_string(&file)
                    .map_err(|source| StoreError::invalid(format!("cannot read {}: {source}", file.display())))?;
                let session = SessionLines::parse(&text)
                    .map_err(|error| StoreError::invalid(format!("{}: {error}", file.display())))?;
                if session.torn_tail {
                    eprintln!("Warning: the last line of {} was cut short (a crash); it is left out", file.display());
                }
                store.import(&session).await?;
                eprintln!("Imported session {} ({} entries)", session.header.id, session.entries.len());
            }
        }
        StoreCommand::Copy { ids, from, to } => {
            let (source, target) = (open(from).await?, AnyStore::open(&to).await?);
            let ids = match ids.is_empty() {
                true => source.list().await?.into_iter().map(|session| session.id).collect(),
                false => ids,
            };
            let (mut copied, mut skipped) = (0, 0);
            for id in ids {
                let text = source.export(&id).await?.ok_or_else(|| StoreError::NotFound(id.clone()))?;
                let session = SessionLines::parse(&text)
                    .map_err(|error| StoreError::invalid(format!("session {id}: {error}")))?;
                match target.import(&session).await {
                    Ok(()) => copied += 1,
                    Err(StoreError::Exists(_)) => skipped += 1,
                    Err(error) => return Err(error),
                }
            }
            eprintln!("Copied {copied} session(s); {skipped} were there already");
        }
        StoreCommand::Delete { id, store } => {
            if !open(store).await?.delete(&id).await? {
                return Err(StoreError::NotFound(id));
            }
        }
    }
    Ok(())
}

fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
}
