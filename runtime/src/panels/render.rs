//! The contents of the panels derived from state: Todo (P1, hierarchical), Library (P2), Tools (P4),
//! Memories (P6, most important first), Scratchpad (P9) and Statistics (P3).

use super::state::{Memory, PanelState, TodoItem};

/// P1: todos nested under their parents, with their status marks.
pub fn todo_panel(state: &PanelState) -> String {
    if state.todos.is_empty() {
        return "No todos. Use the todo tool to plan multi-step work.".to_owned();
    }
    let mut text = String::new();
    let known = |id: &str| state.todos.iter().any(|todo| todo.id == id);
    let roots = state.todos.iter().filter(|todo| todo.parent.as_deref().is_none_or(|parent| !known(parent)));
    for root in roots {
        push_todo(&mut text, state, root, 0);
    }
    let done = state.todos.iter().filter(|todo| todo.status == super::state::TodoStatus::Done).count();
    text.push_str(&format!("\n{done} of {} done.", state.todos.len()));
    text
}

fn push_todo(text: &mut String, state: &PanelState, todo: &TodoItem, depth: usize) {
    // Parents are only followed downwards from roots, and a cycle cannot start at a root.
    if depth > 16 {
        return;
    }
    text.push_str(&format!("{}{} {} {}\n", "  ".repeat(depth), todo.status.mark(), todo.id, todo.text));
    for child in state.todos.iter().filter(|child| child.parent.as_deref() == Some(todo.id.as_str())) {
        push_todo(text, state, child, depth + 1);
    }
}

/// P6: memories, most important first (ties in the order they were made).
pub fn memories_panel(memories: &[Memory]) -> String {
    if memories.is_empty() {
        return "No memories. Use the memory tool to keep facts worth remembering across the session.".to_owned();
    }
    let mut sorted: Vec<&Memory> = memories.iter().collect();
    sorted.sort_by_key(|memory| std::cmp::Reverse(memory.importance));
    let lines: Vec<String> =
        sorted.iter().map(|memory| format!("{} [{}] {}", memory.id, memory.importance.name(), memory.text)).collect();
    lines.join("\n")
}

/// P9: the cells, each under its id and title.
pub fn scratchpad_panel(state: &PanelState) -> String {
    if state.scratchpad.is_empty() {
        return "Empty. Use the scratchpad tool to keep notes, plans or intermediate results.".to_owned();
    }
    let cells: Vec<String> = state
        .scratchpad
        .iter()
        .map(|cell| {
            let title = if cell.title.is_empty() { String::new() } else { format!(" {}", cell.title) };
            format!("--- {}{title} ---\n{}", cell.id, cell.content)
        })
        .collect();
    cells.join("\n")
}

/// One line of the Library: a skill, a prompt template or a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryEntry {
    pub kind: LibraryKind,
    pub name: String,
    pub description: String,
    /// The file behind it, when it has one (a skill can be opened as a panel by this path).
    pub path: Option<String>,
}

/// What a [`LibraryEntry`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LibraryKind {
    Skill,
    PromptTemplate,
    Command,
}

/// P2: the agent's skills, prompt templates and commands.
pub fn library_panel(entries: &[LibraryEntry]) -> String {
    let section = |kind: LibraryKind, title: &str, prefix: &str| -> Option<String> {
        let lines: Vec<String> = entries
            .iter()
            .filter(|entry| entry.kind == kind)
            .map(|entry| {
                let path = entry.path.as_deref().map(|path| format!(" ({path})")).unwrap_or_default();
                format!("- {prefix}{}: {}{path}", entry.name, entry.description)
            })
            .collect();
        (!lines.is_empty()).then(|| format!("{title}:\n{}", lines.join("\n")))
    };
    let sections: Vec<String> = [
        section(LibraryKind::Skill, "Skills (open a skill's file to read it)", ""),
        section(LibraryKind::PromptTemplate, "Prompt templates", "/"),
        section(LibraryKind::Command, "Commands", "/"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if sections.is_empty() { "No skills, prompt templates or commands.".to_owned() } else { sections.join("\n\n") }
}

/// P4: the tools, enabled ones first.
pub fn tools_panel(all: &[(String, String)], active: &[String]) -> String {
    let (enabled, disabled): (Vec<_>, Vec<_>) = all.iter().partition(|(name, _)| active.contains(name));
    let list = |tools: &[&(String, String)]| -> String {
        if tools.is_empty() {
            return "\n(none)".to_owned();
        }
        tools.iter().map(|(name, description)| format!("\n- {name}: {}", first_line(description))).collect()
    };
    format!("Enabled:{}\n\nDisabled:{}", list(&enabled), list(&disabled))
}

/// Longest description the Tools panel shows (the tools' own definitions carry the rest).
const TOOL_SUMMARY_CHARS: usize = 100;

/// The first sentence (or line) of a description, cut at [`TOOL_SUMMARY_CHARS`].
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let sentence = line.find(". ").map_or(line, |end| &line[..=end]);
    if sentence.chars().count() <= TOOL_SUMMARY_CHARS {
        return sentence.to_owned();
    }
    let cut: String = sentence.chars().take(TOOL_SUMMARY_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// What the Statistics panel (P3) reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statistics {
    pub requests: u64,
    pub live_messages: usize,
    pub detached_messages: usize,
    pub conversation_tokens: u64,
    pub panel_tokens: u64,
    pub open_panels: usize,
    pub todos_open: usize,
    pub memories: usize,
    /// The previous request's panel tokens served from the prompt cache, and not.
    pub last_hit_tokens: u64,
    pub last_miss_tokens: u64,
    /// Dollars spent on panel tokens so far.
    pub panel_cost: f64,
}

/// P3.
pub fn statistics_panel(stats: &Statistics) -> String {
    format!(
        "Requests: {}\nConversation: {} live messages ({} tokens), {} detached\nPanels: {} ({} tokens)\n\
         Todos open: {}\nMemories: {}\nPrevious request's panels: {} tokens cached, {} not\nPanel cost so far: ${:.4}",
        stats.requests,
        stats.live_messages,
        stats.conversation_tokens,
        stats.detached_messages,
        stats.open_panels,
        stats.panel_tokens,
        stats.todos_open,
        stats.memories,
        stats.last_hit_tokens,
        stats.last_miss_tokens,
        stats.panel_cost
    )
}
