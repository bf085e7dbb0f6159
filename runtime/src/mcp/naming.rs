//! Tool names the model sees for MCP tools, as pi names them: `mcp__<server>__<tool>` with every character
//! other than an ASCII letter, digit or `_` replaced by `_`, at most 64 characters. A name that is too long,
//! already taken, or shared by two tools of one server after the replacement is cut to 55 characters and
//! followed by `_` and 8 hex digits of the SHA-256 of `<server>\0<tool>`.

use sha2::{Digest, Sha256};

/// The longest tool name providers accept.
pub const MAX_TOOL_NAME: usize = 64;
const HASHED_PREFIX: usize = 55;

/// The plain name of `server`'s tool `tool` (before length and collision handling).
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", sanitize(server), sanitize(tool))
}

/// `text` with characters other than ASCII letters, digits and `_` replaced by `_`.
pub fn sanitize(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// The names of `server`'s tools `tools` (in order), none of them in `taken`.
pub fn tool_names(server: &str, tools: &[&str], taken: &dyn Fn(&str) -> bool) -> Vec<String> {
    let plain: Vec<String> = tools.iter().map(|tool| tool_name(server, tool)).collect();
    plain
        .iter()
        .zip(tools)
        .map(|(name, tool)| {
            let shared = plain.iter().filter(|other| *other == name).count() > 1;
            if name.len() > MAX_TOOL_NAME || shared || taken(name) { hashed(name, server, tool) } else { name.clone() }
        })
        .collect()
}

fn hashed(name: &str, server: &str, tool: &str) -> String {
    let digest = Sha256::new().chain_update(server).chain_update([0]).chain_update(tool).finalize();
    let hex: String = digest.iter().take(4).map(|byte| format!("{byte:02x}")).collect();
    // The plain name is ASCII, so any byte offset is a character boundary.
    format!("{}_{hex}", &name[..name.len().min(HASHED_PREFIX)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_word_characters_only() {
        assert_eq!(tool_name("files", "read_file"), "mcp__files__read_file");
        assert_eq!(tool_name("my-server", "get.thing/v2"), "mcp__my_server__get_thing_v2");
        assert_eq!(tool_name("demo", "dash-name.tool"), "mcp__demo__dash_name_tool");
    }

    #[test]
    fn long_shared_and_taken_names_get_a_hash_as_pi_gives_them() {
        let long = "x".repeat(70);
        let names = tool_names("raw", &["a-b", "a_b", "ok", &long], &|_| false);
        assert_eq!(names[0], "mcp__raw__a_b_c9b918d2");
        assert_eq!(names[1], "mcp__raw__a_b_afc94b4e");
        assert_eq!(names[2], "mcp__raw__ok");
        assert_eq!(names[3], "mcp__raw__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_f42f5bd6");
        assert_eq!(names[3].len(), MAX_TOOL_NAME);

        let taken = tool_names("raw", &["ok"], &|name| name == "mcp__raw__ok");
        assert!(taken[0].starts_with("mcp__raw__ok_") && taken[0].len() == "mcp__raw__ok_".len() + 8, "{taken:?}");
    }
}
