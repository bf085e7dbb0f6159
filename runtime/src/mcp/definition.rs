//! The MCP servers an agent declares in its YAML (`mcp: { servers: [...] }`), as generated code builds them.
//! The user's `mcp.json` files become the same values at run time (see [`super::config_file`]).

/// How long one tool call may take before it answers an error, unless the server says otherwise.
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 60_000;

/// The YAML's `mcp:` section.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpDefinition {
    /// In YAML order.
    pub servers: Vec<McpServerDefinition>,
}

/// One MCP server: how to reach it and which of its tools the agent takes.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerDefinition {
    /// Names the server in tool names (`mcp__<name>__<tool>`), logs and `/mcp`.
    pub name: String,
    pub transport: McpTransport,
    /// Only these of the server's tools (by the server's own names); `None` takes all of them.
    pub tools: Option<Vec<String>>,
    /// The server's tools left out (by the server's own names).
    pub exclude: Vec<String>,
    /// How long one tool call may take.
    pub timeout_ms: u64,
    /// A server that cannot start stops the agent; otherwise it is a warning and the agent runs without it.
    pub required: bool,
    /// A disabled server is listed but never started.
    pub enabled: bool,
    /// What the server is for, shown by `/mcp`.
    pub description: Option<String>,
}

impl McpServerDefinition {
    /// A server with the defaults: all its tools, a 60 s call timeout, optional, enabled.
    pub fn new(name: impl Into<String>, transport: McpTransport) -> Self {
        Self {
            name: name.into(),
            transport,
            tools: None,
            exclude: Vec::new(),
            timeout_ms: DEFAULT_CALL_TIMEOUT_MS,
            required: false,
            enabled: true,
            description: None,
        }
    }

    /// Whether the agent takes the server's tool `tool` (its own name).
    pub fn takes_tool(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|only| only.iter().any(|name| name == tool))
            && !self.exclude.iter().any(|name| name == tool)
    }
}

/// How a server is reached. Values in `env` and `headers` (and the command, its arguments, the URL) may name
/// environment variables as `${VAR}`, expanded when the server starts, so no secret is compiled in.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpTransport {
    /// A child process speaking JSON-RPC over its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the agent's environment.
        env: Vec<(String, String)>,
        /// Where the server runs (`None`: the agent's working directory); `~/` is the home directory.
        cwd: Option<String>,
    },
    /// A server reached over streamable HTTP.
    Http { url: String, headers: Vec<(String, String)> },
}

impl McpTransport {
    /// `stdio` or `http`, as `/mcp` and the listing show it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
        }
    }
}
