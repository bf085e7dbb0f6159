//! The lines around the conversation: the header at the start (agent, version, key hints) and the footer
//! under the editor (working directory and branch; tokens, cost and context use; model and thinking level).

use pi_tui::text::{truncate_to_width, visible_width};
use pi_tui::{Role, Theme};

use super::format::tokens;
use crate::agent_session::SessionStats;

/// The header lines: the agent's name and version, then the keys a newcomer needs.
pub fn header(name: &str, version: &str, theme: &Theme) -> Vec<String> {
    let hints = [
        ("escape", "interrupt"),
        ("ctrl+c/ctrl+d", "clear/exit"),
        ("/", "commands"),
        ("!", "bash"),
        ("ctrl+o", "more"),
    ];
    let hint_line = hints
        .iter()
        .map(|(key, what)| format!("{} {}", theme.fg(Role::Dim, key), theme.fg(Role::Muted, what)))
        .collect::<Vec<_>>()
        .join(&theme.fg(Role::Dim, " · "));
    vec![
        String::new(),
        format!(" {}", theme.bold(&theme.fg(Role::Accent, &format!("{name} v{version}")))),
        format!(" {hint_line}"),
        format!(" {}", theme.fg(Role::Dim, "Type /hotkeys for every key, / for the commands.")),
    ]
}

/// What the footer shows.
pub struct FooterInfo<'a> {
    pub cwd: &'a str,
    pub branch: Option<&'a str>,
    pub session_name: Option<&'a str>,
    pub stats: &'a SessionStats,
    pub context_window: u64,
    pub auto_compaction: bool,
    pub model: Option<&'a str>,
    /// The thinking level, for models that reason.
    pub thinking: Option<&'a str>,
}

/// Two lines: where, then what it costs and which model.
pub fn footer(info: &FooterInfo<'_>, width: usize, theme: &Theme) -> Vec<String> {
    let mut place = info.cwd.to_owned();
    if let Some(branch) = info.branch {
        place.push_str(&format!(" ({branch})"));
    }
    if let Some(name) = info.session_name {
        place.push_str(&format!(" • {name}"));
    }
    let first = theme.fg(Role::Dim, &truncate_to_width(&place, width, "..."));

    let totals = &info.stats.tokens;
    let mut parts = Vec::new();
    if totals.input > 0 {
        parts.push(format!("↑{}", tokens(totals.input)));
    }
    if totals.output > 0 {
        parts.push(format!("↓{}", tokens(totals.output)));
    }
    if totals.cache_read > 0 {
        parts.push(format!("R{}", tokens(totals.cache_read)));
    }
    if totals.cache_write > 0 {
        parts.push(format!("W{}", tokens(totals.cache_write)));
    }
    if info.stats.cost > 0.0 {
        parts.push(format!("${:.3}", info.stats.cost));
    }
    let used = info.stats.context_usage.as_ref().map_or(0, |usage| usage.tokens);
    let percent = if info.context_window > 0 { used as f64 * 100.0 / info.context_window as f64 } else { 0.0 };
    let auto = if info.auto_compaction { " (auto)" } else { "" };
    parts.push(format!("{percent:.1}%/{}{auto}", tokens(info.context_window)));
    let left = parts.join(" ");
    let right = match (info.model, info.thinking) {
        (Some(model), Some(level)) => format!("{model} • {level}"),
        (Some(model), None) => model.to_owned(),
        (None, _) => "no model".to_owned(),
    };
    let gap = width.saturating_sub(visible_width(&left) + visible_width(&right));
    let second = if gap >= 2 {
        format!("{left}{}{right}", " ".repeat(gap))
    } else {
        truncate_to_width(&format!("{left}  {right}"), width, "...")
    };
    let second = if percent >= 90.0 {
        theme.fg(Role::Error, &second)
    } else if percent >= 70.0 {
        theme.fg(Role::Warning, &second)
    } else {
        theme.fg(Role::Dim, &second)
    };
    vec![first, second]
}
