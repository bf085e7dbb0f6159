//! The embedded engine: `serve`'s verbs carried out by the sessions of this process ([`Registry`]), each a
//! task driven by the RPC dispatcher, over the session files on disk.

use std::path::{Path, PathBuf};

use axum::http::StatusCode;
use serde_json::Value;
use tokio::sync::oneshot;

use super::actor::{PromptAccepted, Request};
use super::api_error::ApiError;
use super::engine::{EngineFuture, EventStream, PromptRequest, SessionEngine};
use super::metrics::Metrics;
use super::registry::{NewSession, Registry, SessionHandle, SessionSummary};
use crate::cli::rpc::RpcCommand;

impl SessionEngine for Registry {
    fn create(&self, request: NewSession) -> EngineFuture<'_, String> {
        Box::pin(async move { Ok(Registry::create(self, request).await?.0) })
    }

    fn list<'a>(&'a self, cwd: Option<&'a Path>) -> EngineFuture<'a, Vec<SessionSummary>> {
        Box::pin(async move { Registry::list(self, cwd) })
    }

    fn delete<'a>(&'a self, id: &'a str) -> EngineFuture<'a, ()> {
        Box::pin(self.close(id, true))
    }

    fn command<'a>(&'a self, id: &'a str, command: RpcCommand) -> EngineFuture<'a, (Value, String)> {
        Box::pin(async move {
            let handle = self.get(id).await?;
            let forking = matches!(command, RpcCommand::Fork { .. });
            let (data, now) = command_on(&handle, command).await?;
            if forking && now != id {
                self.rename(id, &now);
            }
            Ok((data, now))
        })
    }

    fn prompt<'a>(&'a self, id: &'a str, prompt: PromptRequest) -> EngineFuture<'a, PromptAccepted> {
        Box::pin(async move {
            let handle = self.get(id).await?;
            let (reply, answer) = oneshot::channel();
            let request = Request::Prompt {
                message: prompt.message,
                images: prompt.images,
                idempotency_key: prompt.idempotency_key,
                permit: Some(prompt.permit),
                reply,
            };
            handle.requests.send(request).map_err(|_| ApiError::session_gone())?;
            answer.await.map_err(|_| ApiError::session_gone())?
        })
    }

    fn events<'a>(&'a self, id: &'a str, after: u64) -> EngineFuture<'a, EventStream> {
        Box::pin(async move {
            let handle = self.get(id).await?;
            let stream: EventStream = Box::pin(handle.events.clone().stream(after));
            Ok(stream)
        })
    }

    fn export_jsonl<'a>(&'a self, id: &'a str) -> EngineFuture<'a, Vec<u8>> {
        Box::pin(async move {
            let handle = self.get(id).await?;
            let (data, _) = command_on(&handle, RpcCommand::GetState).await?;
            let file = data["sessionFile"].as_str().map(PathBuf::from);
            file.as_deref().and_then(|file| std::fs::read(file).ok()).ok_or_else(no_session_file)
        })
    }

    fn export_html<'a>(&'a self, id: &'a str) -> EngineFuture<'a, Vec<u8>> {
        Box::pin(async move {
            let handle = self.get(id).await?;
            let target = std::env::temp_dir().join(format!("pi-serve-export-{}.html", uuid::Uuid::new_v4()));
            let output_path = Some(target.to_string_lossy().into_owned());
            let written = command_on(&handle, RpcCommand::ExportHtml { output_path }).await;
            let page = std::fs::read(&target);
            let _ = std::fs::remove_file(&target);
            written?;
            page.map_err(|error| ApiError::internal(format!("cannot read the exported page: {error}")))
        })
    }

    fn import<'a>(&'a self, bytes: &'a [u8]) -> EngineFuture<'a, String> {
        Box::pin(async move { Registry::import(self, bytes) })
    }

    fn answer_dialog<'a>(&'a self, id: &'a str, line: String) -> EngineFuture<'a, bool> {
        Box::pin(async move { Ok(self.get(id).await?.dialogs.take_response(&line)) })
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn open_sessions(&self) -> usize {
        self.open_count()
    }

    fn stop(&self) -> EngineFuture<'_, ()> {
        Box::pin(async move {
            self.close_all().await;
            Ok(())
        })
    }
}

/// The refusal of an export before the session has a file.
pub fn no_session_file() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no_session_file",
        "the session has no file yet: it is written once the first answer arrives",
    )
}

/// Carries out `command` on an open session; returns the reply's data and the session's id afterwards.
async fn command_on(handle: &SessionHandle, command: RpcCommand) -> Result<(Value, String), ApiError> {
    let (reply, answer) = oneshot::channel();
    handle.requests.send(Request::Command { command, reply }).map_err(|_| ApiError::session_gone())?;
    let (line, session_id) = answer.await.map_err(|_| ApiError::session_gone())?;
    let reply: Value = serde_json::from_str(&line).map_err(|error| ApiError::internal(error.to_string()))?;
    if reply["success"] != Value::Bool(true) {
        let error = reply["error"].as_str().unwrap_or("the command failed").to_owned();
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "command_failed", error));
    }
    let data = match reply.get("data") {
        Some(Value::Null) | None => serde_json::json!({}),
        Some(data) => data.clone(),
    };
    Ok((data, session_id))
}
