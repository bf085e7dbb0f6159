//! The session tree selector (`/tree`, double Escape): search, filters (Ctrl+D default, Ctrl+T no tools,
//! Ctrl+U user messages, Ctrl+L labeled, Ctrl+A all; Ctrl+O cycles), Shift+L to label the selected entry in
//! a prompt, Shift+T to show when labels were set; Enter moves the leaf, Alt+Enter also summarizes the branch
//! left behind.

use pi_tui::editor::{Editor, EditorOutcome};
use pi_tui::keys::{KeyEvent, is_key};
use pi_tui::{Role, Theme};

use super::UiEvent;
use super::app::App;
use super::dialogs::TextDialog;
use super::picker::{Picker, PickerOutcome};
use super::selectors::Overlay;
use super::tree_items::{TreeFilter, TreeView, tree_items};

/// The tree selector and how it shows the tree.
pub struct TreeSelector {
    pub picker: Picker,
    view: TreeView,
}

/// The label prompt over the tree: the entry it labels, the text box, the tree to go back to.
pub struct LabelPrompt {
    target: String,
    pub dialog: TextDialog,
    tree: TreeSelector,
}

const FILTER_KEYS: [(&str, TreeFilter); 5] = [
    ("ctrl+d", TreeFilter::Default),
    ("ctrl+t", TreeFilter::NoTools),
    ("ctrl+u", TreeFilter::UserOnly),
    ("ctrl+l", TreeFilter::LabeledOnly),
    ("ctrl+a", TreeFilter::All),
];

fn hints() -> Vec<String> {
    vec![
        "↑/↓: move. enter: go there, alt+enter: go and summarize the branch left behind. shift+l: label. \
         ctrl+d/ctrl+t/ctrl+u/ctrl+l/ctrl+a: filters (ctrl+o cycle). shift+t: label time"
            .to_owned(),
        "Type to search; esc: close.".to_owned(),
    ]
}

fn title(filter: TreeFilter) -> String {
    match filter {
        TreeFilter::Default => "Session tree".to_owned(),
        other => format!("Session tree · {}", other.name()),
    }
}

impl App {
    pub(super) fn open_tree_picker(&mut self) {
        let view = TreeView::default();
        let (items, leaf) = tree_items(self.session.manager().tree(), view);
        if items.is_empty() {
            self.transcript.notice("The session has no entries yet.", Role::Muted);
            return;
        }
        let mut picker = Picker::new(&title(view.filter), hints(), items, &self.theme);
        if let Some(leaf) = leaf {
            picker.select_value(&leaf);
            picker.mark_value(Some(leaf));
        }
        self.overlay = Some(Overlay::Tree(TreeSelector { picker, view }));
    }

    /// A key while the tree selector is open.
    pub(super) fn on_tree_key(&mut self, mut tree: TreeSelector, key: &KeyEvent) {
        if is_key(key, "shift+l") {
            let Some(target) = tree.picker.selected_value() else {
                self.overlay = Some(Overlay::Tree(tree));
                return;
            };
            let mut editor = Editor::new(self.theme.clone());
            if let Some(label) = self.session.manager().tree().label(&target) {
                editor.set_text(label);
            }
            let hint = "enter: save (empty clears the label), esc: back to the tree".to_owned();
            let dialog = TextDialog { title: "Label".to_owned(), hint, editor, reply: None };
            self.overlay = Some(Overlay::TreeLabel(Box::new(LabelPrompt { target, dialog, tree })));
            return;
        }
        let filter = FILTER_KEYS.iter().find(|(name, _)| is_key(key, name)).map(|(_, filter)| *filter);
        let filter = filter.or_else(|| {
            if is_key(key, "ctrl+o") {
                Some(tree.view.filter.cycle(false))
            } else if is_key(key, "shift+ctrl+o") {
                Some(tree.view.filter.cycle(true))
            } else {
                None
            }
        });
        if let Some(filter) = filter {
            tree.view.filter = filter;
            tree.picker.title = title(filter);
            self.overlay = Some(Overlay::Tree(tree));
            self.refresh_tree();
            return;
        }
        if is_key(key, "shift+t") {
            tree.view.label_times = !tree.view.label_times;
            self.overlay = Some(Overlay::Tree(tree));
            self.refresh_tree();
            return;
        }
        match tree.picker.handle_key(key) {
            PickerOutcome::Picked { value, alternate } => self.navigate(value, alternate),
            PickerOutcome::Closed => {}
            PickerOutcome::Stay | PickerOutcome::Other(_) => self.overlay = Some(Overlay::Tree(tree)),
        }
    }

    /// A key while the label prompt is open: Enter saves the label, Escape goes back to the tree.
    pub(super) fn on_label_key(&mut self, mut prompt: LabelPrompt, key: &KeyEvent) {
        // Enter saves even an empty text (the editor sends nothing on an empty Enter): that clears the label.
        let outcome = if is_key(key, "enter") {
            EditorOutcome::Submit(prompt.dialog.editor.text())
        } else {
            prompt.dialog.editor.handle_key(key)
        };
        let text = match outcome {
            EditorOutcome::Submit(text) => Some(text),
            EditorOutcome::Ignored if is_key(key, "escape") || is_key(key, "ctrl+c") => None,
            _ => {
                self.overlay = Some(Overlay::TreeLabel(Box::new(prompt)));
                return;
            }
        };
        if let Some(text) = text {
            let text = text.trim();
            let label = (!text.is_empty()).then(|| text.to_owned());
            if let Err(error) = self.session.manager().append_label(&prompt.target, label) {
                self.transcript.notice(format!("Error: {error}"), Role::Error);
            }
        }
        self.overlay = Some(Overlay::Tree(prompt.tree));
        self.refresh_tree();
    }

    /// The tree's rows again (a label or the filter changed), keeping the selection where it can.
    fn refresh_tree(&mut self) {
        let Some(Overlay::Tree(tree)) = &mut self.overlay else { return };
        let (items, leaf) = tree_items(self.session.manager().tree(), tree.view);
        // The selected entry stays selected when the new rows have it; else the leaf's row is.
        let selected = tree.picker.selected_value().filter(|value| items.iter().any(|item| &item.value == value));
        tree.picker.set_items(items);
        tree.picker.mark_value(leaf.clone());
        if let Some(value) = selected.or(leaf) {
            tree.picker.select_value(&value);
        }
    }

    /// Moves the leaf to entry `id` (with a summary of the branch left when `summarize`).
    fn navigate(&mut self, id: String, summarize: bool) {
        if self.refuse_while_busy() {
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        if summarize {
            self.status = Some("Summarizing the branch...".to_owned());
        }
        let task = tokio::task::spawn_local(async move {
            let event = match session.navigate_tree(&id, summarize, None).await {
                Ok(navigation) => UiEvent::Reload { editor_text: navigation.editor_text, notice: None },
                Err(error) => UiEvent::Reload { editor_text: None, notice: Some(format!("Error: {error}")) },
            };
            let _ = sender.send(event);
        });
        self.keep(task);
    }
}

impl TreeSelector {
    pub fn render(&mut self, width: usize) -> Vec<String> {
        self.picker.render(width)
    }
}

impl LabelPrompt {
    pub fn render(&mut self, width: usize, theme: &Theme) -> Vec<String> {
        self.dialog.render(width, theme)
    }
}
