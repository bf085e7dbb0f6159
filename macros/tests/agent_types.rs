//! `#[agent]` types that must compile and work: an agent with Rust tools and hooks, and a Rust extension
//! beside an agent. The runtime is the dev-dependency renamed to `engine`, so these also prove that the
//! macro finds a renamed runtime. (The mistakes that must not compile are trybuild's cases, tests/ui/fail.)

use std::future::Future;
use std::task::{Context, Poll, Waker};

/// Polls a future that never waits to completion.
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            return value;
        }
    }
}

/// An agent with two Rust tools and two hooks: the definition reflects the YAML (the hook script embedded,
/// executable), and the tools parse their arguments into the generated structs and call the implementation.
mod two_tools {
    use super::ready;
    use std::sync::Mutex;

    use engine::protocol::AgentToolResult;
    use engine::tools::{ToolContext, ToolError};
    use pi_macros::agent;

    #[agent("tests/ui/two_tools.yaml")]
    struct Shelf {
        items: Mutex<Vec<String>>,
    }

    impl ShelfTools for Shelf {
        async fn add_item(&self, args: AddItemArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
            let AddItemArgs { name, r#type, shelf_number, labels } = args;
            let shelf = shelf_number.unwrap_or(1);
            let entry = format!("{name} ({}) on {shelf} [{}]", r#type, labels.unwrap_or_default().join(","));
            self.items.lock().map_err(|_| ToolError::new("poisoned"))?.push(entry);
            Ok(AgentToolResult::text("added"))
        }

        async fn list_items(&self, _args: ListItemsArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
            let items = self.items.lock().map_err(|_| ToolError::new("poisoned"))?;
            Ok(AgentToolResult::text(items.join("\n")))
        }
    }

    fn text(result: Result<AgentToolResult, ToolError>) -> String {
        match result {
            Ok(result) => result.content.iter().filter_map(|block| block.as_text()).collect(),
            Err(error) => format!("error: {error}"),
        }
    }

    #[test]
    fn rust_tools_follow_the_yaml_and_parse_their_arguments() {
        let definition = Shelf::definition();
        assert_eq!(definition.name, "shelf");
        let declared: Vec<&str> = definition.custom_tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(declared, ["add_item", "list-items", "count"]);
        assert_eq!(definition.custom_tools[0].handler, engine::CustomToolHandler::Rust);
        assert_eq!(definition.hooks.len(), 2);
        assert_eq!(definition.hooks[0].name, "stamp");
        assert!(matches!(
            &definition.hooks[0].action,
            engine::extension::HookAction::Command { script: Some(script), .. } if script == "hooks/stamp.sh"
        ));
        assert!(matches!(
            &definition.hooks[1].action,
            engine::extension::HookAction::BlockToolCall { arguments, .. } if arguments[0].argument == "type"
        ));
        let stamp =
            definition.resources.files.iter().find(|file| file.path == "hooks/stamp.sh").expect("embedded script");
        assert!(stamp.executable);
        assert!(stamp.contents.starts_with(b"#!/bin/sh"));

        let tools = std::sync::Arc::new(Shelf { items: Mutex::new(Vec::new()) }).rust_tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        assert_eq!(names, ["add_item", "list-items"]);
        assert_eq!(tools[0].description(), "Put an item on the shelf");
        assert_eq!(tools[0].parameters()["required"], engine::macro_support::serde_json::json!(["name", "type"]));

        let args = engine::macro_support::serde_json::json!({
            "name": "jar", "type": "glass", "shelfNumber": 3, "labels": ["jam", "red"]
        });
        assert_eq!(text(ready(tools[0].execute(args, ToolContext::new("c1")))), "added");
        let missing = engine::macro_support::serde_json::json!({ "name": "jar" });
        let error = text(ready(tools[0].execute(missing, ToolContext::new("c2"))));
        assert_eq!(error, "error: Invalid arguments for tool \"add_item\": missing field `type`");
        let listed =
            text(ready(tools[1].execute(engine::macro_support::serde_json::json!({}), ToolContext::new("c3"))));
        assert_eq!(listed, "jar (glass) on 3 [jam,red]");
    }
}

/// A Rust extension beside an `#[agent]` type: handlers written as plain `async fn`, a slash command
/// registered, the runner applying the handler, and `run_with_extensions` accepting the extensions.
mod extension {
    use super::ready;
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
            Ok(if event.tool_name == "bash" {
                ToolCallDecision::block("no shell here")
            } else {
                ToolCallDecision::Allow
            })
        }
    }

    #[test]
    fn a_rust_extension_registers_beside_the_agent() {
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
}
