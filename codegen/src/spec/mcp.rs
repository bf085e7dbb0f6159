//! `mcp:` in the agent YAML: Model Context Protocol servers whose tools the agent takes, each reached by a
//! command it starts (stdio) or a URL (streamable HTTP). The user's `mcp.json` files add to them at run time.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

/// What every MCP tool's name starts with: `mcp__<server>__<tool>`.
pub const MCP_TOOL_PREFIX: &str = "mcp__";

/// The call timeout the runtime uses when `timeout` is left out (`pi_runtime::mcp::DEFAULT_CALL_TIMEOUT_MS`).
pub const DEFAULT_MCP_TIMEOUT_SECS: u64 = 60;

/// `mcp:`: the MCP servers whose tools the agent takes.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpSpec {
    /// The servers, in order. Their tools are named `mcp__<server>__<tool>`.
    pub servers: Vec<McpServerSpec>,
}

/// One MCP server: exactly one of `command` (a process speaking MCP over stdin and stdout) and `url`
/// (streamable HTTP), and which of its tools the agent takes.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerSpec {
    /// Names the server in tool names (`mcp__<name>__<tool>`), logs and `/mcp`: letters, digits, '_' and
    /// '-', unique.
    pub name: String,
    /// A stdio server: the program, then its arguments, e.g.
    /// `[npx, -y, "@modelcontextprotocol/server-filesystem", "."]`. `${VAR}` names an environment variable,
    /// expanded when the server starts. Not with `url`.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// With `command`: variables added to the agent's environment for the server. Give secrets as `${VAR}`,
    /// expanded when the server starts, so they are not compiled into the binary.
    #[serde(default, deserialize_with = "ordered_strings")]
    #[schemars(with = "BTreeMap<String, String>")]
    pub env: Option<Vec<(String, String)>>,
    /// With `command`: the directory the server runs in (`~/` is the home directory). Default: the agent's
    /// working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// A streamable HTTP server: its `http://` or `https://` URL. Not with `command`.
    #[serde(default)]
    pub url: Option<String>,
    /// With `url`: headers sent with every request, e.g. `Authorization: "Bearer ${SEARCH_TOKEN}"` (`${VAR}`
    /// is expanded when the server starts, so the secret is not compiled into the binary).
    #[serde(default, deserialize_with = "ordered_strings")]
    #[schemars(with = "BTreeMap<String, String>")]
    pub headers: Option<Vec<(String, String)>>,
    /// Only these of the server's tools, by the server's own names. Default: all of them. Not with `exclude`.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// The server's tools left out, by the server's own names. Not with `tools`.
    #[serde(default)]
    pub exclude: Option<Vec<String>>,
    /// Seconds one tool call may take (more than 0; fractions allowed, e.g. 0.5). Default: 60.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// A server that cannot start stops the agent; otherwise the agent warns and runs without it.
    /// Default: false.
    #[serde(default)]
    pub required: Option<bool>,
    /// `false` lists the server but never starts it. Default: true.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// What the server is for, shown by `/mcp`.
    #[serde(default)]
    pub description: Option<String>,
}

impl McpServerSpec {
    /// The call timeout in milliseconds (seconds rounded to the nearest millisecond), when `timeout` is given.
    pub fn timeout_ms(&self) -> Option<u64> {
        // `as` saturates: a negative timeout becomes 0 (refused by validation), a huge one u64::MAX.
        self.timeout.map(|secs| (secs * 1000.0).round() as u64)
    }
}

/// The name tools of the server `name` are prefixed with (`mcp__<key>__<tool>`): every character but ASCII
/// letters, digits and '_' becomes '_'. Two servers whose keys are equal would give their tools the same names.
pub fn mcp_tool_prefix_key(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// Whether `name` can name an MCP server: non-empty, ASCII letters, digits, '_' and '-'.
pub fn is_mcp_server_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

/// A mapping of text to text, read in document order (`env`, `headers`).
fn ordered_strings<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<(String, String)>>, D::Error> {
    struct Pairs;

    impl<'de> Visitor<'de> for Pairs {
        type Value = Vec<(String, String)>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a mapping of names to text")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut pairs = Vec::new();
            while let Some(pair) = map.next_entry::<String, String>()? {
                pairs.push(pair);
            }
            Ok(pairs)
        }
    }

    deserializer.deserialize_map(Pairs).map(Some)
}
