//! `GET /openapi.json`: the API described as OpenAPI 3.0, its request and answer bodies generated from the
//! types the handlers read and write (schemars), so the description cannot drift from the code.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use super::actor::PromptAccepted;
use super::batches::{BatchRequest, BatchStarted, BatchStatus};
use super::registry::{NewSession, SessionList};
use super::routes::{CompactBody, ForkBody, ModelBody, PromptBody, QueuedBody, ThinkingBody};

/// One operation of the API.
struct Operation {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    /// The JSON body it takes.
    body: Option<Schema>,
    /// The success status, its content type and schema.
    answer: (u16, &'static str, Option<Schema>),
}

/// The document, for the agent `agent` at `version`.
pub fn openapi_document(agent: &str, version: &str) -> Value {
    let mut generator = SchemaSettings::openapi3().into_generator();
    let operations = operations(&mut generator);
    let mut paths = Map::new();
    for operation in operations {
        let mut described = Map::new();
        described.insert("summary".into(), json!(operation.summary));
        if operation.path.contains("{id}") {
            let what = if operation.path.starts_with("/v1/batches") { "The batch id" } else { "The session id" };
            described.insert("parameters".into(), json!([path_parameter("id", what)]));
        }
        if operation.path.contains("{request_id}") {
            let parameters =
                json!([path_parameter("id", "The session id"), path_parameter("request_id", "The dialog's id")]);
            described.insert("parameters".into(), parameters);
        }
        if let Some(schema) = operation.body {
            let content = json!({ "application/json": { "schema": schema } });
            described.insert("requestBody".into(), json!({ "required": true, "content": content }));
        }
        let (status, content_type, schema) = operation.answer;
        let mut answer = json!({ "description": "Success" });
        if !content_type.is_empty() {
            let schema = schema.map_or_else(|| json!({}), |schema| schema.to_value());
            answer["content"] = json!({ content_type: { "schema": schema } });
        }
        let mut answers = Map::new();
        answers.insert(status.to_string(), answer);
        answers.insert(
            "default".into(),
            json!({ "description": "A refusal", "content": { "application/json": {
            "schema": { "$ref": "#/components/schemas/Error" } } } }),
        );
        described.insert("responses".into(), Value::Object(answers));
        if operation.path == "/healthz" {
            described.insert("security".into(), json!([]));
        }
        let entry = paths.entry(operation.path).or_insert_with(|| json!({}));
        entry[operation.method] = Value::Object(described);
    }
    let mut schemas: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    schemas.insert("Error".into(), error_schema());
    json!({
        "openapi": "3.0.3",
        "info": { "title": format!("{agent} serve"), "version": version },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } }
        },
        "security": [{ "bearer": [] }]
    })
}

fn operations(generator: &mut SchemaGenerator) -> Vec<Operation> {
    let mut schema = |make: fn(&mut SchemaGenerator) -> Schema| Some(make(generator));
    let new_session = schema(|g| g.subschema_for::<NewSession>());
    let session_list = schema(|g| g.subschema_for::<SessionList>());
    let prompt = schema(|g| g.subschema_for::<PromptBody>());
    let accepted = schema(|g| g.subschema_for::<PromptAccepted>());
    let queued = schema(|g| g.subschema_for::<QueuedBody>());
    let compact = schema(|g| g.subschema_for::<CompactBody>());
    let fork = schema(|g| g.subschema_for::<ForkBody>());
    let model = schema(|g| g.subschema_for::<ModelBody>());
    let thinking = schema(|g| g.subschema_for::<ThinkingBody>());
    let created = schema(|g| g.subschema_for::<SessionCreated>());
    let batch = schema(|g| g.subschema_for::<BatchRequest>());
    let batch_started = schema(|g| g.subschema_for::<BatchStarted>());
    let batch_status = schema(|g| g.subschema_for::<BatchStatus>());
    let json_body = "application/json";
    let op = |method, path, summary, body, answer| Operation { method, path, summary, body, answer };
    vec![
        op("get", "/healthz", "Whether the server is up (no token needed)", None, (200, json_body, None)),
        op("get", "/metrics", "Counters in Prometheus' text format", None, (200, "text/plain", None)),
        op("get", "/openapi.json", "This description", None, (200, json_body, None)),
        op("post", "/v1/sessions", "Start a session", new_session, (201, json_body, created.clone())),
        op("get", "/v1/sessions", "List sessions (`cwd`, `offset`, `limit`)", None, (200, json_body, session_list)),
        op(
            "post",
            "/v1/sessions/import",
            "Store a pi session file (JSONL) as a session",
            None,
            (201, json_body, created),
        ),
        op("get", "/v1/sessions/{id}", "The session's state (RPC get_state)", None, (200, json_body, None)),
        op("delete", "/v1/sessions/{id}", "Close the session and delete its file", None, (204, "", None)),
        op(
            "post",
            "/v1/sessions/{id}/prompt",
            "Run a prompt; answered once its run started",
            prompt,
            (202, json_body, accepted),
        ),
        op("post", "/v1/sessions/{id}/steer", "Queue a steering message", queued.clone(), (200, json_body, None)),
        op("post", "/v1/sessions/{id}/follow_up", "Queue a follow-up", queued, (200, json_body, None)),
        op("post", "/v1/sessions/{id}/abort", "Abort what runs", None, (200, json_body, None)),
        op("post", "/v1/sessions/{id}/compact", "Compact the context now", compact, (200, json_body, None)),
        op(
            "post",
            "/v1/sessions/{id}/fork",
            "Continue as a new session forked before an entry",
            fork,
            (200, json_body, None),
        ),
        op("post", "/v1/sessions/{id}/model", "Switch the model", model, (200, json_body, None)),
        op("post", "/v1/sessions/{id}/thinking", "Set the thinking level", thinking, (200, json_body, None)),
        op(
            "get",
            "/v1/sessions/{id}/events",
            "The events as server-sent events (`id:` the number, `data:` a --mode json line); resume with Last-Event-ID or `after`",
            None,
            (200, "text/event-stream", None),
        ),
        op(
            "get",
            "/v1/sessions/{id}/export.jsonl",
            "The session file, byte for byte",
            None,
            (200, "application/x-ndjson", None),
        ),
        op("get", "/v1/sessions/{id}/export.html", "The session as an HTML page", None, (200, "text/html", None)),
        op(
            "post",
            "/v1/sessions/{id}/ui/{request_id}",
            "Answer an extension's dialog (`value`, `confirmed` or `cancelled`)",
            None,
            (204, "", None),
        ),
        op(
            "post",
            "/v1/batches",
            "Run a prompt in a session per repository, `concurrency` at once",
            batch,
            (202, json_body, batch_started),
        ),
        op(
            "get",
            "/v1/batches/{id}",
            "A batch's progress and its sessions' answers",
            None,
            (200, json_body, batch_status),
        ),
    ]
}

/// The answer to a new or imported session.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct SessionCreated {
    id: String,
}

fn path_parameter(name: &str, description: &str) -> Value {
    json!({ "name": name, "in": "path", "required": true, "description": description, "schema": { "type": "string" } })
}

fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["error"],
        "properties": { "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": { "code": { "type": "string" }, "message": { "type": "string" } }
        } }
    })
}
