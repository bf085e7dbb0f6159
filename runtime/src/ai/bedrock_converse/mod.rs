//! The `bedrock-converse-stream` provider: Amazon Bedrock's ConverseStream API as pi 0.73.1 calls it
//! through the AWS SDK for JavaScript. POST `{endpoint}/model/{modelId}/converse-stream` with a JSON body,
//! authorized by a SigV4 signature (or a Bedrock API key as a bearer token), answered by an AWS event
//! stream (binary frames with `:event-type` headers). Credentials and region come from the standard AWS
//! environment variables and shared files ([`credentials`]); like pi, the call's API key, headers and
//! retry settings are not used.

mod call;
pub mod credentials;
mod decode;
mod errors;
mod request;
mod signing;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};

pub use call::{StreamMessage, next_message};
pub use credentials::{AUTHENTICATED, AwsEnvironment, BedrockAuth, BedrockTarget, env_has_credentials, resolve_target};
pub use decode::BedrockDecoder;
pub use request::{build_body, converse_stream_url};
pub use signing::SIGNING_NAME;

use self::call::PreparedCall;
use super::Model;
use super::anthropic_messages::CacheRetention;
use super::pi15::apply_user_agent;
use super::provider::{ApiProvider, LlmContext, StreamOptions, empty_assistant_message};
use super::stream::AssistantMessageStream;
use super::transport::DEFAULT_IDLE_TIMEOUT;

/// The api name this provider serves.
pub const API: &str = "bedrock-converse-stream";
/// The provider id of pi's built-in Bedrock models.
pub const PROVIDER: &str = "amazon-bedrock";

/// Streams Bedrock ConverseStream responses.
#[derive(Debug, Clone, Default)]
pub struct BedrockConverseProvider {
    env: AwsEnvironment,
}

impl BedrockConverseProvider {
    /// Reads AWS settings from the process environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads AWS settings from `env` instead (tests).
    pub fn with_env(env: AwsEnvironment) -> Self {
        Self { env }
    }
}

impl ApiProvider for BedrockConverseProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let call = prepare(model, context, &options, &self.env);
        let decoder = BedrockDecoder::new(empty_assistant_message(model), model);
        call::spawn(model, call, decoder, options.cancel, options.on_payload)
    }
}

/// URL, headers, body and credentials of a call.
fn prepare(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    env: &AwsEnvironment,
) -> Result<PreparedCall, String> {
    let target = resolve_target(&model.base_url, env)?;
    let body = build_body(model, context, options, CacheRetention::from_env(), env)?;
    let body = serde_json::to_vec(&body).map_err(|e| format!("could not serialize the request: {e}"))?;
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let agent = HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION")));
    headers.insert("x-amz-user-agent", agent.clone());
    headers.insert(USER_AGENT, agent);
    apply_user_agent(&mut headers, options)?;
    Ok(PreparedCall {
        url: converse_stream_url(&target.endpoint, &model.id),
        headers,
        body,
        auth: target.auth,
        region: target.region,
        idle_timeout: options.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
    })
}
