//! `/login` and `/logout` in the interactive mode: a selector of the subscription providers (or the one
//! named), the login's address and questions as notices and text dialogs while the browser or device flow
//! runs in the background, and the model list read again once auth.json changed.

use std::path::PathBuf;
use std::sync::Arc;

use pi_tui::Role;
use tokio::sync::mpsc::UnboundedSender;

use super::UiEvent;
use super::app::App;
use super::dialogs::InteractiveUi;
use crate::agent::BoxFuture;
use crate::ai::oauth::{LoginPrompter, OAuthCredentials, OAuthServer, SubscriptionProvider, login};
use crate::cli::oauth_keys::{OAuthKeyring, store_entry};
use crate::extension::{ExtensionUi, NotifyLevel, UiRequest, UiResponse};

/// What `/login` and `/logout` change: the run's logins and the file they live in.
#[derive(Clone)]
pub struct LoginContext {
    pub keyring: Arc<OAuthKeyring>,
    pub auth_path: PathBuf,
}

impl App {
    /// `/login [provider]`.
    pub(super) fn login(&mut self, args: &str) {
        let Some(context) = self.logins.clone() else { return };
        let named = match args {
            "" => None,
            id => match SubscriptionProvider::from_id(id) {
                Some(provider) => Some(provider),
                None => {
                    let ids: Vec<&str> = SubscriptionProvider::ALL.iter().map(|p| p.id()).collect();
                    let text = format!("\"{id}\" has no login; the providers with one are {}.", ids.join(", "));
                    self.transcript.notice(text, Role::Warning);
                    return;
                }
            },
        };
        let sender = self.sender.clone();
        let reloader = self.reloader.clone();
        let task = tokio::task::spawn_local(async move {
            let ui = InteractiveUi { sender: sender.clone() };
            let provider = match named {
                Some(provider) => Some(provider),
                None => choose(&ui, "Log in to", SubscriptionProvider::ALL.to_vec()).await,
            };
            let Some(provider) = provider else { return };
            let prompter = DialogPrompter { ui: InteractiveUi { sender: sender.clone() } };
            let env = |name: &str| std::env::var(name).ok();
            let outcome = login(provider, &prompter, &OAuthServer::from_env(&env), &env).await;
            let notice = match outcome {
                Ok(credentials) => match store_entry(&context.auth_path, provider.id(), Some(credentials.to_entry())) {
                    Ok(()) => {
                        context.keyring.remember(provider.id(), credentials).await;
                        format!("Logged in to {}. Its models are in /model now.", provider.display_name())
                    }
                    Err(error) => format!("Error: the login worked but could not be saved: {error}"),
                },
                Err(error) => format!("Error: the {} login failed: {error}", provider.display_name()),
            };
            refresh_models(&sender, reloader.as_deref());
            let _ = sender.send(UiEvent::TaskFinished(Some(notice)));
        });
        self.keep(task);
    }

    /// `/logout [provider]`: forgets a login stored in auth.json.
    pub(super) fn logout(&mut self, args: &str) {
        let Some(context) = self.logins.clone() else { return };
        let stored = stored_logins(&context.auth_path);
        if stored.is_empty() {
            self.transcript.notice("No subscription is logged in.", Role::Muted);
            return;
        }
        let named = match args {
            "" => None,
            id => match stored.iter().copied().find(|provider| provider.id() == id) {
                Some(provider) => Some(provider),
                None => {
                    self.transcript.notice(format!("\"{id}\" is not logged in."), Role::Warning);
                    return;
                }
            },
        };
        let sender = self.sender.clone();
        let reloader = self.reloader.clone();
        let task = tokio::task::spawn_local(async move {
            let ui = InteractiveUi { sender: sender.clone() };
            let provider = match named {
                Some(provider) => Some(provider),
                None => choose(&ui, "Log out of", stored).await,
            };
            let Some(provider) = provider else { return };
            let notice = match store_entry(&context.auth_path, provider.id(), None) {
                Ok(()) => {
                    context.keyring.forget(provider.id()).await;
                    format!("Logged out of {}.", provider.display_name())
                }
                Err(error) => format!("Error: {error}"),
            };
            refresh_models(&sender, reloader.as_deref());
            let _ = sender.send(UiEvent::TaskFinished(Some(notice)));
        });
        self.keep(task);
    }
}

/// The providers with an OAuth entry in auth.json.
fn stored_logins(auth_path: &std::path::Path) -> Vec<SubscriptionProvider> {
    let text = std::fs::read_to_string(auth_path).unwrap_or_default();
    let stored: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    SubscriptionProvider::ALL
        .into_iter()
        .filter(|provider| OAuthCredentials::from_entry(&stored[provider.id()]).is_some())
        .collect()
}

/// Asks which provider, in a selector; `None` when it is closed.
async fn choose(ui: &InteractiveUi, title: &str, choices: Vec<SubscriptionProvider>) -> Option<SubscriptionProvider> {
    let options = choices.iter().map(|provider| provider.display_name().to_owned()).collect();
    match ui.request(UiRequest::Select { title: title.to_owned(), options }).await {
        UiResponse::Value(label) => choices.into_iter().find(|provider| provider.display_name() == label),
        _ => None,
    }
}

/// Reads models.json and auth.json again so `/model` lists what the change made available.
fn refresh_models(sender: &UnboundedSender<UiEvent>, reloader: Option<&crate::cli::reload::Reloader>) {
    if let Some(models) = reloader.and_then(|reloader| reloader.models().ok()) {
        let _ = sender.send(UiEvent::Models(Box::new(models)));
    }
}

/// The login's messages as notices, its questions as text dialogs.
struct DialogPrompter {
    ui: InteractiveUi,
}

impl LoginPrompter for DialogPrompter {
    fn show_auth(&self, url: &str, instructions: &str) {
        crate::cli::login::open_browser(url);
        let message = format!("Open this address to log in: {url}\n{instructions}");
        drop(self.ui.request(UiRequest::Notify { message, level: NotifyLevel::Info }));
    }

    fn ask(&self, question: &str, placeholder: Option<&str>) -> BoxFuture<'_, Option<String>> {
        let request = UiRequest::Input { title: question.to_owned(), placeholder: placeholder.map(str::to_owned) };
        let answer = self.ui.request(request);
        Box::pin(async move {
            match answer.await {
                UiResponse::Value(text) => Some(text),
                _ => None,
            }
        })
    }

    fn progress(&self, message: &str) {
        drop(self.ui.request(UiRequest::Notify { message: message.to_owned(), level: NotifyLevel::Info }));
    }
}
