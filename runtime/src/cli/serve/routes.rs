//! The HTTP API of `serve`: sessions, the RPC verbs as routes, the events as server-sent events, export.
//! Every verb becomes the RPC command of the same name, so `--mode rpc` and `serve` answer alike.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::actor::PromptAccepted;
use super::api_error::ApiError;
use super::auth::require_token;
use super::batches::BatchRequest;
use super::engine::{PromptRequest, SessionEngine};
use super::local_batches::LocalBatches;
use super::metrics::Gauges;
use super::registry::{NewSession, SessionList};
use crate::cli::rpc::RpcCommand;
use crate::protocol::ImageContent;

/// What every handler reaches.
#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<dyn SessionEngine>,
    pub token: Option<Arc<str>>,
    /// One permit per prompt that may run at once.
    pub turns: Arc<Semaphore>,
    pub max_turns: usize,
    pub max_image_bytes: usize,
    /// The OpenAPI description, made once at start.
    pub openapi: Arc<Value>,
    /// The batches the server runs itself (for an engine without its own).
    pub batches: Arc<LocalBatches>,
}

/// The seconds a client is asked to wait when every turn is taken.
const TURNS_RETRY_AFTER_SECONDS: u64 = 2;

/// The API's routes; `max_body_bytes` bounds every request body.
pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    let sessions = Router::new()
        .route("/v1/sessions", post(create_session).get(list_sessions))
        .route("/v1/sessions/{id}", get(session_state).delete(delete_session))
        .route("/v1/sessions/{id}/prompt", post(prompt))
        .route("/v1/sessions/{id}/steer", post(steer))
        .route("/v1/sessions/{id}/follow_up", post(follow_up))
        .route("/v1/sessions/{id}/abort", post(abort))
        .route("/v1/sessions/{id}/compact", post(compact))
        .route("/v1/sessions/{id}/fork", post(fork))
        .route("/v1/sessions/{id}/model", post(set_model))
        .route("/v1/sessions/{id}/thinking", post(set_thinking))
        .route("/v1/sessions/{id}/events", get(events))
        .route("/v1/sessions/{id}/export.jsonl", get(export_jsonl))
        .route("/v1/sessions/{id}/ui/{request_id}", post(answer_dialog))
        .route("/v1/sessions/import", post(import_session))
        .route("/v1/sessions/{id}/export.html", get(export_html))
        .route("/v1/batches", post(start_batch))
        .route("/v1/batches/{id}", get(batch_status))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .route("/healthz", get(|| async { axum::Json(json!({ "ok": true })) }))
        .merge(sessions)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}

/// A request body read whole, with the API's own refusal when it is too large.
pub struct ApiBytes(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for ApiBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        Bytes::from_request(request, state).await.map(ApiBytes).map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "body_too_large",
                    "the request body is larger than the server takes (serve --max-body)",
                )
            } else {
                ApiError::bad_request(rejection.body_text())
            }
        })
    }
}

/// A JSON body read with the API's own refusals (an empty body reads as `{}`; no content type needed).
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let ApiBytes(bytes) = ApiBytes::from_request(request, state).await?;
        let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
        serde_json::from_slice(text)
            .map(ApiJson)
            .map_err(|error| ApiError::bad_request(format!("the request body: {error}")))
    }
}

async fn create_session(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<NewSession>,
) -> Result<Response, ApiError> {
    let id = state.engine.create(request).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({ "id": id }))).into_response())
}

#[derive(serde::Deserialize)]
struct ListQuery {
    cwd: Option<PathBuf>,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

/// The most sessions one page lists.
const MAX_PAGE: usize = 500;

async fn list_sessions(State(state): State<AppState>, Query(query): Query<ListQuery>) -> Result<Response, ApiError> {
    let all = state.engine.list(query.cwd.as_deref()).await?;
    let limit = query.limit.unwrap_or(100).clamp(1, MAX_PAGE);
    let sessions: Vec<_> = all.iter().skip(query.offset).take(limit).cloned().collect();
    let next = query.offset + sessions.len();
    let next_offset = (next < all.len()).then_some(next);
    Ok(axum::Json(SessionList { sessions, total: all.len(), next_offset }).into_response())
}

async fn start_batch(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<BatchRequest>,
) -> Result<Response, ApiError> {
    let concurrency = request.checked()?;
    let started = if state.engine.runs_batches() {
        state.engine.start_batch(request, concurrency).await?
    } else {
        state.batches.start(state.engine.clone(), state.turns.clone(), request, concurrency).await?
    };
    Ok((StatusCode::ACCEPTED, axum::Json(started)).into_response())
}

async fn batch_status(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let status = match state.engine.runs_batches() {
        true => state.engine.batch(&id).await?,
        false => state.batches.status(&id)?,
    };
    Ok(axum::Json(status).into_response())
}

async fn session_state(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(run_command(&state, &id, RpcCommand::GetState).await?).into_response())
}

async fn delete_session(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    state.engine.delete(&id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptBody {
    pub message: String,
    #[serde(default)]
    #[schemars(with = "Vec<ImageSchema>")]
    pub images: Vec<ImageContent>,
    pub idempotency_key: Option<String>,
}

async fn prompt(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<PromptBody>,
) -> Result<Response, ApiError> {
    check_images(&body.images, state.max_image_bytes)?;
    let Ok(permit) = state.turns.clone().try_acquire_owned() else {
        let mut error = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_turns",
            "every turn this server runs at once is taken (serve --max-turns); try again shortly",
        );
        error.retry_after = Some(TURNS_RETRY_AFTER_SECONDS);
        return Err(error);
    };
    let request =
        PromptRequest { message: body.message, images: body.images, idempotency_key: body.idempotency_key, permit };
    let accepted: PromptAccepted = state.engine.prompt(&id, request).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(accepted)).into_response())
}

/// An image in a prompt, as pi's RPC takes it.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
pub struct ImageSchema {
    /// `image`.
    r#type: String,
    /// Base64 data.
    data: String,
    #[serde(rename = "mimeType")]
    mime_type: String,
}

/// Refuses an image larger than the server takes, once decoded.
fn check_images(images: &[ImageContent], max_bytes: usize) -> Result<(), ApiError> {
    for (index, image) in images.iter().enumerate() {
        let decoded = image.data.len() / 4 * 3;
        if decoded > max_bytes {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "image_too_large",
                format!("images[{index}] is about {decoded} bytes; the server takes {max_bytes} (serve --max-image)"),
            ));
        }
    }
    Ok(())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueuedBody {
    pub message: String,
    #[serde(default)]
    #[schemars(with = "Vec<ImageSchema>")]
    pub images: Vec<ImageContent>,
}

async fn steer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<QueuedBody>,
) -> Result<Response, ApiError> {
    check_images(&body.images, state.max_image_bytes)?;
    let command = RpcCommand::Steer { message: body.message, images: body.images };
    Ok(axum::Json(run_command(&state, &id, command).await?).into_response())
}

async fn follow_up(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<QueuedBody>,
) -> Result<Response, ApiError> {
    check_images(&body.images, state.max_image_bytes)?;
    let command = RpcCommand::FollowUp { message: body.message, images: body.images };
    Ok(axum::Json(run_command(&state, &id, command).await?).into_response())
}

async fn abort(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(run_command(&state, &id, RpcCommand::Abort).await?).into_response())
}

#[derive(serde::Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct CompactBody {
    pub custom_instructions: Option<String>,
}

async fn compact(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<CompactBody>,
) -> Result<Response, ApiError> {
    let command = RpcCommand::Compact { custom_instructions: body.custom_instructions };
    Ok(axum::Json(run_command(&state, &id, command).await?).into_response())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkBody {
    pub entry_id: String,
}

/// Forks before an entry: the session continues as the new one (`id` in the answer), and the old one stays
/// on disk under its own id.
async fn fork(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ForkBody>,
) -> Result<Response, ApiError> {
    let (mut data, now) = state.engine.command(&id, RpcCommand::Fork { entry_id: body.entry_id }).await?;
    if let Value::Object(fields) = &mut data {
        fields.insert("id".into(), Value::String(now));
    }
    Ok(axum::Json(data).into_response())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelBody {
    pub provider: String,
    pub model: String,
}

async fn set_model(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ModelBody>,
) -> Result<Response, ApiError> {
    let command = RpcCommand::SetModel { provider: body.provider, model_id: body.model };
    Ok(axum::Json(run_command(&state, &id, command).await?).into_response())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkingBody {
    pub level: String,
}

async fn set_thinking(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ThinkingBody>,
) -> Result<Response, ApiError> {
    let command = RpcCommand::SetThinkingLevel { level: body.level };
    Ok(axum::Json(run_command(&state, &id, command).await?).into_response())
}

#[derive(serde::Deserialize)]
struct EventsQuery {
    after: Option<u64>,
}

/// The session's events from the start, or after `Last-Event-ID` (or `?after=N`).
async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let last_seen = headers.get("last-event-id").and_then(|value| value.to_str().ok()).map(str::trim);
    let after = match last_seen {
        Some(text) => text
            .parse()
            .map_err(|_| ApiError::bad_request(format!("Last-Event-ID {text}: expected an event number")))?,
        None => query.after.unwrap_or(0),
    };
    let events = state.engine.events(&id, after).await?;
    let stream = events.map(|(number, line)| Ok::<_, Infallible>(Event::default().id(number.to_string()).data(&*line)));
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}

/// The session file, byte for byte.
async fn export_jsonl(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let bytes = state.engine.export_jsonl(&id).await?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], bytes).into_response())
}

/// Answers an extension's dialog (`extension_ui_request` event): the body is the answer, as RPC's
/// `extension_ui_response` carries it (`value`, `confirmed` or `cancelled`).
async fn answer_dialog(
    State(state): State<AppState>,
    Path((id, request_id)): Path<(String, String)>,
    ApiJson(body): ApiJson<serde_json::Map<String, Value>>,
) -> Result<Response, ApiError> {
    let mut answer = body;
    answer.insert("type".into(), json!("extension_ui_response"));
    answer.insert("id".into(), json!(request_id));
    let line = Value::Object(answer).to_string();
    if !state.engine.answer_dialog(&id, line).await? {
        return Err(ApiError::bad_request("the answer is not a valid dialog response"));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The API's description.
async fn openapi(State(state): State<AppState>) -> Response {
    axum::Json(state.openapi.clone()).into_response()
}

/// The counters, in Prometheus' text format.
async fn metrics(State(state): State<AppState>) -> Response {
    let gauges = Gauges {
        sessions_open: state.engine.open_sessions(),
        turns_running: state.max_turns.saturating_sub(state.turns.available_permits()),
        turns_limit: state.max_turns,
    };
    let text = state.engine.metrics().render(&gauges);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

/// A session file (pi's JSONL) becomes a session of this server, stored byte for byte; its directory must
/// lie under a root and its id must be new.
async fn import_session(State(state): State<AppState>, ApiBytes(bytes): ApiBytes) -> Result<Response, ApiError> {
    let id = state.engine.import(&bytes).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({ "id": id }))).into_response())
}

/// The session as pi's HTML page (every branch, the system prompt, the tools).
async fn export_html(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let page = state.engine.export_html(&id).await?;
    Ok(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response())
}

/// Carries out `command` on the session `id`; returns the reply's data.
async fn run_command(state: &AppState, id: &str, command: RpcCommand) -> Result<Value, ApiError> {
    Ok(state.engine.command(id, command).await?.0)
}
