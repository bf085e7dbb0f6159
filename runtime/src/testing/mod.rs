//! Test support (feature `testing`): a scripted mock LLM server that speaks openai-completions
//! streaming over real HTTP on 127.0.0.1, serves scripted responses in order and records requests.
//!
//! Script JSON (`{"responses":[…]}` or a bare array), one entry per completion request:
//! `{"thinking","text","toolCalls":[{"id"?,"name","arguments"}],"usage":{"input","output","cacheRead"},
//! "finishReason","delayMs","disconnectAfter","streamError"}`, or `{"error":{"status","body","headers"}}`,
//! or `{"raw":"<SSE body>"}`.

mod completion;
mod script;
mod server;

pub use script::{MockCompletion, MockHttpError, MockResponse, MockScript, MockScriptError, MockToolCall, MockUsage};
pub use server::{MockLlmServer, RecordedRequest};

#[cfg(test)]
mod provider_tests;
