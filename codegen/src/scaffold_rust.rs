//! `pi-gen new --rust NAME`: a standalone `#[agent]` crate, outside any workspace, that builds at once: its
//! Cargo.toml (pi-macros and pi-runtime by path from this pi-gen checkout), the checkout's Cargo.lock so the
//! versions the runtime was tested with are used and nothing is resolved anew, a build.rs that rebuilds when
//! a skill is added, the YAML with one `handler: rust` tool, its implementation and a README.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::emit::default_runtime_path;
use crate::error::SpecError;
use crate::lower::rust_tools::names::camel_case;
use crate::schema::agent_schema_text;

/// Where the crate finds pi-gen's own crates.
#[derive(Debug, Clone)]
pub struct RustCrateSources {
    pub runtime: PathBuf,
    pub macros: PathBuf,
    /// The lock file to start from (the pi-gen checkout's).
    pub lock_file: Option<PathBuf>,
}

impl RustCrateSources {
    /// The crates of the checkout this pi-gen was built from.
    pub fn of_this_checkout() -> Self {
        let runtime = default_runtime_path();
        let root = runtime.parent().map(Path::to_path_buf).unwrap_or_default();
        let canonical = |path: PathBuf| std::fs::canonicalize(&path).unwrap_or(path);
        let lock = root.join("Cargo.lock");
        Self {
            runtime: canonical(runtime),
            macros: canonical(root.join("macros")),
            lock_file: lock.is_file().then_some(lock),
        }
    }
}

/// The crate's files as (relative path, contents); the lock file is copied separately.
pub fn rust_crate_files(name: &str, sources: &RustCrateSources) -> Vec<(PathBuf, String)> {
    let type_name = camel_case(name);
    let quoted = |path: &Path| serde_json::to_string(&path.to_string_lossy()).unwrap_or_default();
    let cargo = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
# pi-gen's crates, from the checkout that wrote this crate (they are not on crates.io).
pi-macros = {{ path = {macros} }}
pi-runtime = {{ path = {runtime} }}

# A workspace of its own, so the crate builds wherever it is.
[workspace]

[profile.release]
lto = false
codegen-units = 4
strip = "symbols"
panic = "abort"

# Fast debug builds: dependencies optimized a little and without debug info.
[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
opt-level = 1
debug = false

# As pi-gen builds its generated agents: with the same target directory (PI_GEN_TARGET_DIR or the checkout's
# target/agents) the runtime compiled for them is reused.
[profile.dev.package.pi-runtime]
opt-level = 0
"#,
        macros = quoted(&sources.macros),
        runtime = quoted(&sources.runtime),
    );
    let yaml = format!(
        r#"# yaml-language-server: $schema=agent.schema.json
# {name}: an agent whose `line_stats` tool is written in Rust (src/main.rs). Build it with `cargo build`.
version: 1
name: {name}
description: A coding assistant with a tool written in Rust
model:
  provider: anthropic
  id: claude-sonnet-4-5
  thinking: medium
system_prompt:
  identity: You are {name}, a careful coding assistant working in the user's project.
tools:
  builtin: [read, bash, edit, write, grep, find, ls]
  custom:
    - name: line_stats
      description: Count the lines of a text file, or only the lines that contain a text
      prompt_snippet: Count a file's lines, optionally only those containing a text
      parameters:
        type: object
        properties:
          path: {{ type: string, description: "The file, relative to the working directory" }}
          contains: {{ type: string, description: "Only count lines containing this text" }}
          max_lines: {{ type: integer, minimum: 1, description: "Stop counting after this many lines" }}
        required: [path]
      handler: rust
skills:
  dirs: [skills]
"#
    );
    let main = format!(
        r#"//! {name}: the agent {name}.yaml describes, with its `handler: rust` tools implemented here. `#[agent]`
//! reads the YAML at compile time: a tool without its method, or a YAML mistake, is a compile error.

use std::process::ExitCode;

use pi_macros::agent;
use pi_runtime::protocol::AgentToolResult;
use pi_runtime::tools::{{ToolContext, ToolError}};

/// The agent. Fields here are shared by every tool call (calls may run concurrently).
#[agent("{name}.yaml")]
struct {type_name};

impl {type_name}Tools for {type_name} {{
    /// `line_stats`: `args.path` is required (a `String`); `contains` and `max_lines` are optional
    /// (`Option<String>`, `Option<i64>`).
    async fn line_stats(&self, args: LineStatsArgs, ctx: ToolContext) -> Result<AgentToolResult, ToolError> {{
        let text = read_text(&args.path)?;
        let limit = args.max_lines.and_then(|max| usize::try_from(max).ok()).unwrap_or(usize::MAX);
        let mut counted = 0;
        for line in text.lines().take(limit) {{
            if ctx.cancel.is_cancelled() {{
                return Err(ToolError::new("stopped"));
            }}
            if args.contains.as_deref().is_none_or(|wanted| line.contains(wanted)) {{
                counted += 1;
            }}
        }}
        let what = match &args.contains {{
            Some(wanted) => format!("lines containing \"{{wanted}}\""),
            None => "lines".to_owned(),
        }};
        Ok(AgentToolResult::text(format!("{{}}: {{counted}} {{what}}", args.path)))
    }}
}}

/// The file's text; a missing or binary file is an error the model sees.
fn read_text(path: &str) -> Result<String, ToolError> {{
    let bytes = std::fs::read(path).map_err(|error| ToolError::new(format!("cannot read {{path}}: {{error}}")))?;
    String::from_utf8(bytes).map_err(|_| ToolError::new(format!("{{path}} is not a text file")))
}}

fn main() -> ExitCode {{
    {type_name}.run()
}}
"#
    );
    let build =
        "//! Rebuilds the agent when a skill is added to skills/: `#[agent]` embeds the files it finds there at\n\
                 //! compile time, and cargo only tracks files that already existed.\n\n\
                 fn main() {\n    println!(\"cargo:rerun-if-changed=skills\");\n}\n"
            .to_owned();
    let skill = "---\nname: count-todos\ndescription: Count the TODO comments of a file with line_stats\n---\n\n\
                 Call `line_stats` with `contains: \"TODO\"` for each file the user names, then report the counts.\n"
        .to_owned();
    let agent_dir_env = format!("{}_DIR", crate::spec::default_env_prefix(name));
    let readme = format!(
        r#"# {name}

An agent written with `#[agent]`, generated by `pi-gen new --rust`. `{name}.yaml` describes it (model,
prompt, tools, skills); `src/main.rs` implements its `handler: rust` tools.

```sh
cargo build --release          # the binary: target/release/{name}
target/release/{name} -p "How many TODOs are in src/main.rs?"
cargo build && pi-gen test {name}.yaml --binary target/debug/{name}    # the cases in tests/
```

The crate depends on `pi-macros` and `pi-runtime` by path, from the pi-gen checkout that wrote it, and
its `Cargo.lock` is that checkout's, so it builds with the versions pi-gen was tested with and resolves
nothing new. The agent keeps its settings, sessions and keys in `~/.{name}/agent`, or in
`${agent_dir_env}` when set.

Each `handler: rust` tool is one method of the trait `{type_name}Tools`, taking an argument struct named
after the tool (`line_stats` → `LineStatsArgs`) whose fields follow the parameter schema:
`string` → `String`, `integer` → `i64`, `number` → `f64`, `boolean` → `bool`, `array` of T → `Vec<T>`,
a string `enum` → `String`, `object` (or a mix of types) → `serde_json::Value`; a property not in
`required` (or whose type includes `"null"`) is an `Option`. Add a tool to the YAML and the compiler asks
for its method.
"#
    );
    let test = format!(
        r#"# Tests for {name}.yaml: `cargo build && pi-gen test {name}.yaml --binary target/debug/{name}`.
cases:
  - name: counts the TODO lines
    prompt: How many TODOs are in main.rs?
    files:
      main.rs: "// TODO: one\nfn main() {{}}\n// TODO: two\n"
    model:
      - toolCalls: [{{ name: line_stats, arguments: {{ path: main.rs, contains: TODO }} }}]
      - text: main.rs has 2 TODOs.
    expect:
      tools:
        - name: line_stats
          result_contains: "main.rs: 2 lines containing \"TODO\""
      answer_contains: 2 TODOs
"#
    );
    vec![
        (PathBuf::from("Cargo.toml"), cargo),
        (PathBuf::from(format!("{name}.yaml")), yaml),
        (PathBuf::from("agent.schema.json"), agent_schema_text()),
        (PathBuf::from("build.rs"), build),
        (PathBuf::from("src/main.rs"), main),
        (PathBuf::from("skills/count-todos/SKILL.md"), skill),
        (PathBuf::from("tests/basics.yaml"), test),
        (PathBuf::from("README.md"), readme),
        (PathBuf::from(".gitignore"), "/target\n".to_owned()),
    ]
}

/// Writes the crate into `dir` (created; it must not exist or be empty) and settles its lock file: the
/// checkout's lock, trimmed by cargo to what this crate uses without resolving anything anew. Returns the
/// crate's Cargo.toml.
pub fn create_rust_agent(dir: &Path, name: &str, sources: &RustCrateSources) -> Result<PathBuf, SpecError> {
    crate::scaffold::write_new_files(dir, name, rust_crate_files(name, sources))?;
    let manifest = dir.join("Cargo.toml");
    if let Some(lock) = &sources.lock_file {
        std::fs::copy(lock, dir.join("Cargo.lock"))
            .map_err(|source| SpecError::Write { path: dir.join("Cargo.lock"), source })?;
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        // Updating only the workspace's own package adds the crate to the lock and drops what it does not use;
        // every other version stays, and `--offline` makes sure nothing is fetched.
        let settled = Command::new(cargo)
            .args(["update", "--workspace", "--offline", "--manifest-path"])
            .arg(&manifest)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(SpecError::CargoSpawn)?;
        if !settled.status.success() {
            return Err(SpecError::Scaffold(format!(
                "the crate was written to {}, but cargo could not settle its lock file offline:\n{}",
                dir.display(),
                String::from_utf8_lossy(&settled.stderr).trim()
            )));
        }
    }
    Ok(manifest)
}
