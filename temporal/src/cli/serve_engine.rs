//! `<agent> serve --engine temporal`: `serve`'s own flags and the agent's go to `serve` as usual; the
//! cluster's (`--temporal-address`, `--namespace`, `--store`, `--task-queue`, `--workspace`) are taken out
//! here and make the engine.

use std::process::ExitCode;
use std::sync::Arc;

use pi_runtime::AgentDefinition;
use pi_runtime::cli::serve::{EngineFactory, SessionEngine, run_serve_with_engine};
use pi_runtime::extension::Extensions;
use pi_runtime::tools::AgentTool;

use crate::serve_engine::TemporalEngine;
use crate::worker::ClusterArgs;

/// Whether `serve`'s arguments choose the Temporal engine.
pub(super) fn wants_temporal(raw: &[String]) -> bool {
    raw.windows(2).any(|pair| pair[0] == "--engine" && pair[1] == "temporal")
        || raw.iter().any(|arg| arg == "--engine=temporal")
}

/// The cluster's flags, and what is left for `serve`.
#[derive(Debug, Default, PartialEq)]
struct EngineFlags {
    temporal_address: Option<String>,
    namespace: Option<String>,
    store: Option<String>,
    task_queue: Option<String>,
    workspace: Option<String>,
    rest: Vec<String>,
}

fn take_engine_flags(raw: &[String]) -> Result<EngineFlags, String> {
    let mut flags = EngineFlags::default();
    let mut words = raw.iter();
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (word.as_str(), None),
        };
        let slot = match name {
            "--engine" => None,
            "--temporal-address" => Some(&mut flags.temporal_address),
            "--namespace" => Some(&mut flags.namespace),
            "--store" => Some(&mut flags.store),
            "--task-queue" => Some(&mut flags.task_queue),
            "--workspace" => Some(&mut flags.workspace),
            _ => {
                flags.rest.push(word.clone());
                continue;
            }
        };
        let value = match inline {
            Some(value) => value,
            None => words.next().cloned().ok_or_else(|| format!("{name} needs a value"))?,
        };
        if let Some(slot) = slot {
            *slot = Some(value);
        }
    }
    Ok(flags)
}

/// Runs `serve` with its sessions on the cluster the flags name.
pub(super) fn run_serve(
    definition: AgentDefinition,
    raw: &[String],
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> ExitCode {
    let flags = match take_engine_flags(raw) {
        Ok(flags) => flags,
        Err(error) => {
            eprintln!("Error: {error}");
            return ExitCode::from(2);
        }
    };
    let Some(store) = flags.store else {
        eprintln!(
            "Error: serve --engine temporal needs --store postgres://USER@HOST:PORT/DATABASE (the session store)"
        );
        return ExitCode::from(2);
    };
    let cluster = ClusterArgs {
        temporal_address: flags.temporal_address.unwrap_or_else(|| "127.0.0.1:7233".to_owned()),
        namespace: flags.namespace.unwrap_or_else(|| "default".to_owned()),
        store,
        task_queue: flags.task_queue,
    };
    let workspace = flags.workspace.unwrap_or_else(|| "default".to_owned());
    let factory: EngineFactory = Box::new(move |setup| {
        Box::pin(async move {
            let engine =
                TemporalEngine::connect(&cluster, workspace, setup).await.map_err(|error| error.to_string())?;
            Ok(Arc::new(engine) as Arc<dyn SessionEngine>)
        })
    });
    run_serve_with_engine(&definition, &flags.rest, rust_tools, extensions, Some(factory))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn the_cluster_s_flags_are_taken_out_and_the_rest_goes_to_serve() {
        let raw = words(&[
            "--engine",
            "temporal",
            "--listen",
            "127.0.0.1:0",
            "--store=postgres://u@h/d",
            "--temporal-address",
            "127.0.0.1:7233",
            "--provider",
            "mock",
        ]);
        assert!(wants_temporal(&raw));
        let flags = take_engine_flags(&raw).expect("valid");
        assert_eq!(flags.store.as_deref(), Some("postgres://u@h/d"));
        assert_eq!(flags.temporal_address.as_deref(), Some("127.0.0.1:7233"));
        assert_eq!(flags.rest, words(&["--listen", "127.0.0.1:0", "--provider", "mock"]));
        assert!(!wants_temporal(&words(&["--engine", "embedded"])));
        assert_eq!(take_engine_flags(&words(&["--store"])).expect_err("refused"), "--store needs a value");
    }
}
