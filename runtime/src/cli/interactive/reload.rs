//! `/reload`: settings, skills, prompt templates, context files, SYSTEM.md and models.json are read again
//! and take effect at once (the next prompt's system prompt, the `/` list, the model selector, the theme);
//! extensions see it as `session_shutdown` then `session_start`, both with reason `reload`, as in pi.

use std::rc::Rc;

use pi_tui::{ColorDepth, Role, Theme};

use super::UiEvent;
use super::app::App;
use super::completion::CommandCompletion;
use super::footer::header;
use super::transcript::{Item, Transcript};
use crate::cli::model_catalog::ModelCatalog;
use crate::cli::reload::Reloaded;
use crate::cli::resources::Resources;
use crate::extension::{SessionChangeReason, SessionShutdownEvent, SessionStartEvent};

/// What the screen takes from a reload (the session took the rest).
pub struct ReloadedScreen {
    resources: Resources,
    models: ModelCatalog,
    theme: Option<String>,
    warnings: Vec<String>,
}

impl App {
    /// Reads the files again in the background; the session takes the new prompt, settings and expansion.
    pub(super) fn reload(&mut self) {
        if self.refuse_while_busy() {
            return;
        }
        let Some(reloader) = self.reloader.clone() else {
            self.transcript.notice("This agent has nothing to reload.", Role::Muted);
            return;
        };
        let session = self.session.clone();
        let sender = self.sender.clone();
        self.status = Some("Reloading...".to_owned());
        let task = tokio::task::spawn_local(async move {
            let shutdown = SessionShutdownEvent { reason: SessionChangeReason::Reload, target_session_file: None };
            session.extensions().emit_session_shutdown(&shutdown).await;
            let event = match reloader.reload() {
                Ok(Reloaded {
                    resources,
                    prompt_builder,
                    session_settings,
                    provider_retry,
                    thinking_budgets,
                    models,
                    theme,
                    warnings,
                }) => {
                    session.set_settings(session_settings);
                    session.agent().set_provider_retry(provider_retry);
                    session.agent().set_thinking_budgets(thinking_budgets);
                    session.set_prompt_builder(prompt_builder);
                    session.set_expander(Some(resources.clone().into_expander()));
                    UiEvent::Reloaded(Box::new(ReloadedScreen { resources, models, theme, warnings }))
                }
                Err(error) => {
                    UiEvent::TaskFinished(Some(format!("Error: the reload failed, nothing changed: {error}")))
                }
            };
            let start = SessionStartEvent { reason: SessionChangeReason::Reload, previous_session_file: None };
            session.extensions().emit_session_start(&start).await;
            let _ = sender.send(event);
        });
        self.keep(task);
    }

    /// Shows what the reload changed: completions, models, theme (the conversation drawn again in it).
    pub(super) fn apply_reload(&mut self, reloaded: ReloadedScreen) {
        self.status = None;
        let ReloadedScreen { resources, models, theme, warnings } = reloaded;
        self.editor.set_autocomplete(Box::new(CommandCompletion::new(&self.session, &resources, self.cwd.clone())));
        self.models = Rc::new(models);
        let depth = ColorDepth::detect(|name| std::env::var(name).ok());
        let theme = theme.as_deref().and_then(|name| Theme::named(name, depth)).unwrap_or_else(|| Theme::dark(depth));
        if theme.name() != self.theme.name() {
            self.theme = theme;
            self.editor.set_theme(self.theme.clone());
            let mut transcript = Transcript::new();
            transcript.expand_tools = self.transcript.expand_tools;
            transcript.show_thinking = self.transcript.show_thinking;
            transcript.push(Item::Static(header(&self.agent_name, &self.version, &self.theme)));
            transcript.load(&self.session.agent().messages(), &self.theme);
            self.transcript = transcript;
        }
        for warning in &warnings {
            self.transcript.notice(format!("Warning: {warning}"), Role::Warning);
        }
        self.transcript.notice(
            format!(
                "Reloaded settings, models, context files, {} skills and {} prompt templates.",
                resources.skills.len(),
                resources.templates.len()
            ),
            Role::Muted,
        );
    }
}
