//! When the editor asks its provider for suggestions (a slash command on the first line, an `@` word, Tab)
//! and how an accepted suggestion replaces the prefix it completes.

use std::ops::Range;

use super::autocomplete::{CompletionList, CompletionTrigger, Suggestions};
use super::buffer::Position;
use super::paste;
use super::{Editor, EditorOutcome, LastAction};

impl Editor {
    /// After an edit: asks again for the open list's trigger (Tab) or for the trigger the text calls for,
    /// and shows the answer; no trigger or no items closes the list.
    pub(crate) fn refresh_completion(&mut self) {
        let trigger = match &self.completion {
            Some(list) if list.trigger == CompletionTrigger::Tab => Some(CompletionTrigger::Tab),
            _ => self.automatic_trigger(),
        };
        let suggestions = trigger.and_then(|trigger| Some((trigger, self.ask_provider(trigger)?)));
        self.completion = suggestions
            .and_then(|(trigger, suggestions)| CompletionList::open(suggestions, trigger, self.completion.as_ref()));
    }

    /// The trigger the text before the cursor calls for: a first line starting with `/` with the cursor in
    /// its first word, or a word starting with `@`.
    fn automatic_trigger(&self) -> Option<CompletionTrigger> {
        self.provider.as_ref()?;
        let cursor = self.buffer.cursor();
        let before = self.buffer.line(cursor.row).get(..cursor.col)?;
        if cursor.row == 0 && before.starts_with('/') && !before.contains(char::is_whitespace) {
            return Some(CompletionTrigger::SlashCommand);
        }
        let word = before.rsplit(char::is_whitespace).next().unwrap_or(before);
        word.starts_with('@').then_some(CompletionTrigger::FileReference)
    }

    fn ask_provider(&mut self, trigger: CompletionTrigger) -> Option<Suggestions> {
        let provider = self.provider.as_mut()?;
        let cursor = self.buffer.cursor();
        Some(provider.suggest(self.buffer.line(cursor.row), cursor.col, trigger))
    }

    /// Tab without a list: one suggestion is applied at once, several open the list.
    pub(crate) fn complete_with_tab(&mut self) -> EditorOutcome {
        let Some(mut suggestions) = self.ask_provider(CompletionTrigger::Tab) else {
            return EditorOutcome::Ignored;
        };
        if suggestions.items.len() == 1 {
            let value = suggestions.items.remove(0).value;
            self.apply_completion(&value, suggestions.replace);
            self.completion = None;
        } else {
            self.completion = CompletionList::open(suggestions, CompletionTrigger::Tab, None);
        }
        EditorOutcome::Handled
    }

    /// Applies the selected suggestion and closes the list; whether the item asks to submit on Enter.
    pub(crate) fn accept_completion(&mut self) -> bool {
        let Some(list) = self.completion.take() else { return false };
        let Some(item) = list.items.into_iter().nth(list.selected) else { return false };
        self.apply_completion(&item.value, list.replace);
        item.submit_on_enter
    }

    /// Replaces `replace` of the cursor's line with `value` (an unusable range means an empty one at the
    /// cursor); one undo step.
    fn apply_completion(&mut self, value: &str, replace: Range<usize>) {
        let cursor = self.buffer.cursor();
        let line = self.buffer.line(cursor.row);
        let usable = replace.start <= replace.end && line.get(replace.start..replace.end).is_some();
        let replace = if usable { replace } else { cursor.col..cursor.col };
        self.undo.push(self.buffer.snapshot());
        self.buffer.remove(cursor.with_col(replace.start), Position::new(cursor.row, replace.end));
        self.buffer.insert(&paste::clean_input(value));
        self.history.stop_browsing();
        self.last_action = LastAction::Other;
    }
}
