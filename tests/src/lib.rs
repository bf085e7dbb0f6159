//! Helpers for the end-to-end tests: build an agent from agents/ once, and run it against the mock
//! LLM server with its own agent directory and working directory.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use pi_codegen::{BuildRequest, build_agent};

pub mod browser;
pub mod mcp_servers;
pub mod postgres;
mod pty;
mod rpc_client;
pub mod temporal;

pub use pty::{PtyAgent, keys};
pub use rpc_client::RpcClient;

/// The pi-gen workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// A binary of this package (`src/bin/`). Cargo builds a package's binaries before its integration tests
/// and puts them beside `deps/`, where the test executable runs; this is the path that
/// `env!("CARGO_BIN_EXE_<name>")` names in an integration test of this package.
pub fn package_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("the test executable lives in target/<profile>/deps");
    let bin = profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: cargo builds it only for the integration tests of pi-gen-tests",
        bin.display()
    );
    bin
}

/// `pi-scale`: pi at level 0.73 (as [`agent_binary`]`("pi")`) with the scale-out commands of pi-temporal.
pub fn scale_agent_bin() -> PathBuf {
    package_bin("pi-scale")
}

/// Runs scripts/install-test-tools once per test process (Chromium, playwright-core, the MCP venv): it
/// returns at once when everything is current, and parallel runs wait for each other on its locks. Panics
/// (failing the test, never skipping it) when the install fails.
pub fn install_test_tools() {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let root = workspace_root();
        let script = root.join("scripts").join("install-test-tools");
        let output = std::process::Command::new("bash")
            .arg(&script)
            .current_dir(&root)
            .output()
            .map_err(|error| format!("cannot run {}: {error}", script.display()))?;
        if !output.status.success() {
            return Err(format!(
                "{} failed ({}):\n{}{}",
                script.display(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(())
    });
    if let Err(message) = installed {
        panic!("{message}");
    }
}

/// Builds `agents/<name>.yaml` (once per test process) and returns the binary's path.
pub fn agent_binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<std::sync::Mutex<Vec<(String, PathBuf)>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let mut built = built.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, path)) = built.iter().find(|(built_name, _)| built_name == name) {
        return path.clone();
    }
    let yaml = workspace_root().join("agents").join(format!("{name}.yaml"));
    let path = if name == "pi" { build_yaml(&pi_at_0_73(&yaml), name) } else { build_yaml(&yaml, name) };
    built.push((name.to_owned(), path.clone()));
    path
}

/// agents/pi.yaml speaks pi 1.5 (`pi_compat: "1.5"`); the end-to-end tests of pi's behaviour were written
/// against pi 0.73.1 and keep running at that level, so `agent_binary("pi")` builds a copy at level 0.73
/// (`target/e2e/pi-0.73.yaml`). Tests of level 1.5 pass `--pi-compat 1.5`.
fn pi_at_0_73(yaml: &Path) -> PathBuf {
    let text = std::fs::read_to_string(yaml).expect("agents/pi.yaml");
    let line = "pi_compat: \"1.5\"";
    assert!(text.contains(line), "agents/pi.yaml no longer says {line}");
    let copy = workspace_root().join("target").join("e2e").join("pi-0.73.yaml");
    std::fs::create_dir_all(copy.parent().expect("a parent")).expect("target/e2e");
    let wanted = text.replace(line, "pi_compat: \"0.73\"");
    // Test processes build at the same time: the copy is replaced whole (a rename), never seen half written.
    if std::fs::read_to_string(&copy).ok().as_deref() != Some(wanted.as_str()) {
        let partial = copy.with_extension(format!("yaml.{}", std::process::id()));
        std::fs::write(&partial, &wanted).expect("the 0.73 copy");
        std::fs::rename(&partial, &copy).expect("the 0.73 copy in place");
    }
    copy
}

/// Builds the agent `yaml` describes into `target/e2e/<name>` and returns the binary's path.
pub fn build_yaml(yaml: &Path, name: &str) -> PathBuf {
    let request =
        BuildRequest::new(yaml.to_path_buf()).with_output(workspace_root().join("target").join("e2e").join(name));
    match build_agent(&request) {
        Ok(path) => path,
        Err(error) => panic!("building {} failed: {error}", yaml.display()),
    }
}

/// A scratch agent directory (with models.json) and working directory for one run.
pub struct Sandbox {
    pub root: tempfile::TempDir,
}

impl Sandbox {
    /// Creates the directories and a models.json whose provider `mock` (model `m`) points at `base_url`.
    pub fn new(base_url: &str) -> Self {
        Self::with_api("openai-completions", base_url)
    }

    /// Like [`Sandbox::new`], for a provider speaking `api`.
    pub fn with_api(api: &str, base_url: &str) -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(root.path().join("agent")).expect("agent dir");
        std::fs::create_dir_all(root.path().join("work")).expect("work dir");
        let models = serde_json::json!({
            "providers": {
                "mock": {
                    "baseUrl": base_url,
                    "api": api,
                    "apiKey": "mock-key",
                    "models": [{ "id": "m", "name": "Mock model" }]
                }
            }
        });
        std::fs::write(root.path().join("agent").join("models.json"), models.to_string()).expect("models.json");
        Self { root }
    }

    pub fn agent_dir(&self) -> PathBuf {
        self.root.path().join("agent")
    }

    pub fn work_dir(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// Every session file (`*.jsonl`) under the agent directory's `sessions/`, in no particular order.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut pending = vec![self.agent_dir().join("sessions")];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                    found.push(path);
                }
            }
        }
        found
    }

    /// Writes a file into the working directory.
    pub fn write(&self, relative: &str, content: &str) {
        let path = self.work_dir().join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    /// Runs `binary` with `args` in the working directory, stdin from /dev/null.
    pub async fn run(&self, binary: &Path, args: &[&str]) -> Output {
        self.run_env(binary, args, &[]).await
    }

    /// Starts `binary` with `args` in the working directory (stdin from /dev/null, stdout and stderr piped)
    /// and leaves it running, for tests that signal it.
    pub fn spawn(&self, binary: &Path, args: &[&str]) -> tokio::process::Child {
        let mut command = self.command(binary, args);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        command.spawn().expect("agent starts")
    }

    /// Like [`Sandbox::spawn`] with stdout and stderr discarded, for runs whose output nobody reads (a long
    /// answer would otherwise fill the pipe and block the agent).
    pub fn spawn_quiet(&self, binary: &Path, args: &[&str]) -> tokio::process::Child {
        let mut command = self.command(binary, args);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        command.spawn().expect("agent starts")
    }

    /// Like [`Sandbox::spawn_quiet`], with stderr appended to `log` (for servers whose log a failing test
    /// shows).
    pub fn spawn_logged(&self, binary: &Path, args: &[&str], log: &Path) -> tokio::process::Child {
        self.spawn_logged_env(binary, args, log, &[])
    }

    /// [`Sandbox::spawn_logged`] with extra environment variables.
    pub fn spawn_logged_env(
        &self,
        binary: &Path,
        args: &[&str],
        log: &Path,
        env: &[(&str, &str)],
    ) -> tokio::process::Child {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("the log file");
        let mut command = self.command(binary, args);
        command.envs(env.iter().copied());
        command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(file).kill_on_drop(true);
        command.spawn().expect("agent starts")
    }

    /// Like [`Sandbox::run`], with extra environment variables.
    pub async fn run_env(&self, binary: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = self.command(binary, args);
        command.envs(env.iter().copied()).stdin(std::process::Stdio::null());
        command.output().await.expect("agent runs")
    }

    /// Runs `binary` with `args`, writing `input` to its stdin through a pipe.
    pub async fn run_with_stdin(&self, binary: &Path, args: &[&str], input: &str) -> Output {
        use tokio::io::AsyncWriteExt;
        let mut child = self
            .command(binary, args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("agent starts");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input.as_bytes()).await.expect("write stdin");
        drop(stdin);
        child.wait_with_output().await.expect("agent runs")
    }

    /// Starts `binary --mode rpc` plus `args` with piped stdin and stdout (stderr is inherited).
    pub fn spawn_rpc(&self, binary: &Path, args: &[&str]) -> RpcClient {
        self.spawn_rpc_env(binary, args, &[])
    }

    /// Like [`Sandbox::spawn_rpc`], with extra environment variables.
    pub fn spawn_rpc_env(&self, binary: &Path, args: &[&str], env: &[(&str, &str)]) -> RpcClient {
        let child = self
            .command(binary, &[&["--mode", "rpc"], args].concat())
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("agent starts");
        RpcClient::new(child)
    }

    /// Starts `binary` with `args` in a pseudo-terminal of `rows` x `columns`, as a person would.
    pub fn spawn_pty(&self, binary: &Path, args: &[&str], rows: u16, columns: u16) -> PtyAgent {
        self.spawn_pty_env(binary, args, &[], rows, columns)
    }

    /// Like [`Sandbox::spawn_pty`], with extra environment variables.
    pub fn spawn_pty_env(
        &self,
        binary: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        rows: u16,
        columns: u16,
    ) -> PtyAgent {
        let mut vars = vec![("PI_CODING_AGENT_DIR".to_owned(), self.agent_dir().to_string_lossy().into_owned())];
        // A login never opens the developer's browser (a test may name its own).
        vars.push(("BROWSER".to_owned(), "true".to_owned()));
        vars.extend(env.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())));
        PtyAgent::spawn(binary, args, &self.work_dir(), &vars, &UNINHERITED_VARIABLES, rows, columns)
    }

    fn command(&self, binary: &Path, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(binary);
        command.args(args).current_dir(self.work_dir()).env("PI_CODING_AGENT_DIR", self.agent_dir());
        for key in UNINHERITED_VARIABLES {
            command.env_remove(key);
        }
        // A login never opens the developer's browser: `true` takes the address and does nothing.
        command.env("BROWSER", "true");
        command
    }

    /// Starts `binary` with `args` and extra environment variables, stdin, stdout and stderr piped, for tests
    /// that answer what it asks.
    pub fn spawn_piped_env(&self, binary: &Path, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Child {
        let mut command = self.command(binary, args);
        command
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        command.spawn().expect("agent starts")
    }
}

/// Environment variables a test's agent never inherits: provider keys and cloud settings (the developer's
/// must not leak into a run) and proxies (the mock server is on loopback; a test that wants a proxy sets one).
const UNINHERITED_VARIABLES: [&str; 50] = [
    "PI_GEN_OAUTH_SERVER",
    "PI_OAUTH_CALLBACK_HOST",
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_OAUTH_TOKEN",
    "GEMINI_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "CEREBRAS_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_BASE_URL",
    "AZURE_OPENAI_RESOURCE_NAME",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
    "GOOGLE_CLOUD_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_CLOUD_QUOTA_PROJECT",
    "GOOGLE_VERTEX_BASE_URL",
    "CLOUDSDK_CONFIG",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_BEDROCK_SKIP_AUTH",
    "AWS_BEDROCK_FORCE_CACHE",
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
];

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The `role: tool` messages of an OpenAI request, as `(tool_call_id, content)`.
pub fn tool_results(body: &serde_json::Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| {
            let id = message["tool_call_id"].as_str().unwrap_or_default().to_owned();
            (id, message["content"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}
