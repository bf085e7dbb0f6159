//! Test support (feature `testing`): a scripted mock LLM server on 127.0.0.1 that speaks the LLM APIs
//! over real HTTP and SSE (chosen by request path; Azure's and ChatGPT Codex's (`…/codex/responses`)
//! Responses URLs too, Mistral's chat path by its `Accept: text/event-stream`, and Vertex AI's
//! `…/publishers/google/models/{m}:streamGenerateContent` speaks Gemini's), serves scripted responses in
//! order, records requests, injects faults, and plays Google's OAuth token endpoint (`POST /token`).
//! Bedrock requests must be signed with the mock AWS key pair ([`MOCK_AWS_ACCESS_KEY_ID`],
//! [`MOCK_AWS_SECRET_ACCESS_KEY`]) or carry [`MOCK_AWS_BEARER_TOKEN`], and are answered with AWS event-stream
//! frames.
//!
//! Script JSON (`{"responses":[…]}` or a bare array), one entry per model request:
//! `{"thinking","thinkingSignature","text","toolCalls":[{"id"?,"name","arguments"}],
//! "usage":{"input","output","cacheRead"},"finishReason","delayMs","disconnectAfter","stallAfter",
//! "splitSeed","streamError","waitForRequests"}`, or `{"error":{"status","body","headers"}}`, or `{"raw":"<SSE body>"}`.

mod bedrock_auth;
mod render;
mod script;
mod server;

pub use bedrock_auth::{MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_BEARER_TOKEN, MOCK_AWS_SECRET_ACCESS_KEY};
pub use render::{MockApi, rendered_body};
pub use script::{MockCompletion, MockHttpError, MockResponse, MockScript, MockScriptError, MockToolCall, MockUsage};
pub use server::{
    MockLlmServer, RecordedRequest, TEST_CHATGPT_ACCOUNT_ID, TEST_CLIENT_EMAIL, TEST_GITHUB_TOKEN,
    TEST_OAUTH_REFRESH_TOKEN, TEST_PRIVATE_KEY_PEM, TEST_PROJECT_ID,
};

#[cfg(test)]
mod conformance_tests;
#[cfg(test)]
mod provider_tests;
#[cfg(test)]
mod provider_tests_anthropic;
#[cfg(test)]
mod provider_tests_azure;
#[cfg(test)]
mod provider_tests_bedrock;
#[cfg(test)]
mod provider_tests_codex;
#[cfg(test)]
mod provider_tests_google;
#[cfg(test)]
mod provider_tests_mistral;
#[cfg(test)]
mod provider_tests_responses;
#[cfg(test)]
mod provider_tests_v1_5;
#[cfg(test)]
mod provider_tests_v1_5_anthropic;
#[cfg(test)]
mod provider_tests_v1_5_google;
#[cfg(test)]
mod provider_tests_v1_5_responses;
#[cfg(test)]
mod provider_tests_vertex;
