//! A Rust extension beside an `#[agent]` type: handlers written as plain `async fn`, a slash command
//! registered, the runner applying the handler, and `run_with_extensions` accepting the extensions.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use engine::extension::{
    ExtensionContext, ExtensionRegistrar, ExtensionRunner, Extensions, HookResult, ToolCallDecision, ToolCallEvent,
};
use pi_macros::agent;

#[agent("tests/ui/plain.yaml")]
struct Plain;

/// Refuses every shell command and answers `/ping`.
struct NoShell;

impl engine::extension::Extension for NoShell {
    fn name(&self) -> &str {
        "no-shell"
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        registrar.command("ping", "answers pong", |_args, ctx| async move {
            ctx.send_user_message("pong", None);
            Ok(())
        });
    }

    async fn tool_call(&self, event: &ToolCallEvent, _ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        Ok(if event.tool_name == "bash" { ToolCallDecision::block("no shell here") } else { ToolCallDecision::Allow })
    }
}

/// Polls a future that never waits to completion.
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            return value;
        }
    }
}

fn main() {
    let extensions = Extensions::new().with(NoShell);
    let runner = ExtensionRunner::new(extensions.clone(), ExtensionContext::detached("/"));
    assert_eq!(runner.commands()[0].name, "ping");
    let call = |tool: &str| ToolCallEvent {
        tool_name: tool.to_owned(),
        tool_call_id: "c1".to_owned(),
        input: engine::macro_support::serde_json::json!({"command": "ls"}),
    };
    assert_eq!(ready(runner.emit_tool_call(&call("bash"))), ToolCallDecision::block("no shell here"));
    assert_eq!(ready(runner.emit_tool_call(&call("read"))), ToolCallDecision::Allow);
    let run: fn(Plain, Extensions) -> std::process::ExitCode = Plain::run_with_extensions;
    let _ = (run, extensions);
}
