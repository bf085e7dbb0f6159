//! `<agent> login [provider]` and `<agent> logout [provider]`: the subscription logins from the shell. The
//! address to open is printed (and handed to the browser), a pasted code is read from stdin, and the
//! credentials are written to the agent directory's auth.json as pi writes them, so either program can use
//! a login made by the other.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

use super::oauth_keys::store_entry;
use crate::AgentDefinition;
use crate::agent::BoxFuture;
use crate::ai::oauth::{LoginPrompter, OAuthCredentials, OAuthServer, SubscriptionProvider, login};

/// Runs `login` or `logout` (`logout` is true) with the arguments after the subcommand.
pub(super) fn run_login_command(definition: &AgentDefinition, args: &[String], logout: bool) -> ExitCode {
    let command = if logout { "logout" } else { "login" };
    if args.len() > 1 || args.first().is_some_and(|arg| arg.starts_with('-')) {
        eprintln!("Usage: {} {command} [{}]", definition.name, provider_ids().join("|"));
        return ExitCode::from(2);
    }
    let auth_path = super::paths::agent_dir(definition).join("auth.json");
    let provider = match args.first() {
        Some(id) => match SubscriptionProvider::from_id(id) {
            Some(provider) => provider,
            None => {
                eprintln!("Error: \"{id}\" has no login; the providers with one are {}", provider_ids().join(", "));
                return ExitCode::from(2);
            }
        },
        None => match choose_provider(&definition.name, logout, &auth_path) {
            Some(provider) => provider,
            None => return ExitCode::from(1),
        },
    };
    if logout {
        return match store_entry(&auth_path, provider.id(), None) {
            Ok(()) => {
                println!("Logged out of {}.", provider.display_name());
                ExitCode::SUCCESS
            }
            Err(error) => fail(&error.to_string()),
        };
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(&error.to_string()),
    };
    let env = |name: &str| std::env::var(name).ok();
    let server = OAuthServer::from_env(&env);
    let outcome = runtime
        .block_on(login(provider, &TerminalPrompter, &server, &env))
        .map_err(|error| error.to_string())
        .and_then(|credentials| save(&auth_path, provider, &credentials));
    match outcome {
        Ok(()) => {
            println!("Logged in to {}. The login is saved in {}.", provider.display_name(), auth_path.display());
            ExitCode::SUCCESS
        }
        Err(error) => fail(&error),
    }
}

fn save(path: &Path, provider: SubscriptionProvider, credentials: &OAuthCredentials) -> Result<(), String> {
    store_entry(path, provider.id(), Some(credentials.to_entry())).map_err(|error| error.to_string())
}

fn fail(message: &str) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(1)
}

fn provider_ids() -> Vec<&'static str> {
    SubscriptionProvider::ALL.iter().map(|provider| provider.id()).collect()
}

/// Asks on the terminal which provider to log in to (or, for logout, which stored login to remove).
fn choose_provider(agent: &str, logout: bool, auth_path: &Path) -> Option<SubscriptionProvider> {
    let choices: Vec<SubscriptionProvider> = if logout {
        let stored = std::fs::read_to_string(auth_path).ok().and_then(|text| serde_json::from_str(&text).ok());
        let stored: serde_json::Value = stored.unwrap_or_default();
        SubscriptionProvider::ALL
            .into_iter()
            .filter(|provider| OAuthCredentials::from_entry(&stored[provider.id()]).is_some())
            .collect()
    } else {
        SubscriptionProvider::ALL.to_vec()
    };
    if choices.is_empty() {
        eprintln!("No provider is logged in.");
        return None;
    }
    let mut stderr = std::io::stderr();
    let _ = writeln!(stderr, "{}", if logout { "Log out of:" } else { "Log in to:" });
    for (number, provider) in choices.iter().enumerate() {
        let _ = writeln!(stderr, "  {}. {} ({})", number + 1, provider.display_name(), provider.id());
    }
    let _ = write!(stderr, "Number or id: ");
    let _ = stderr.flush();
    let Some(line) = read_line() else {
        let command = if logout { "logout" } else { "login" };
        eprintln!("\nError: no provider was chosen (name one: {agent} {command} <provider>)");
        return None;
    };
    let answer = line.trim();
    let chosen = answer
        .parse::<usize>()
        .ok()
        .and_then(|number| choices.get(number.wrapping_sub(1)).copied())
        .or_else(|| choices.iter().copied().find(|provider| provider.id() == answer));
    if chosen.is_none() {
        eprintln!("Error: \"{answer}\" is not one of the choices");
    }
    chosen
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// The login's questions on stderr, answers from stdin.
struct TerminalPrompter;

impl LoginPrompter for TerminalPrompter {
    fn show_auth(&self, url: &str, instructions: &str) {
        eprintln!("Open this address to log in:\n\n  {url}\n\n{instructions}");
        open_browser(url);
    }

    fn ask(&self, question: &str, placeholder: Option<&str>) -> BoxFuture<'_, Option<String>> {
        let prompt = match placeholder {
            Some(example) => format!("{question} (e.g. {example}) "),
            None => format!("{question} "),
        };
        Box::pin(async move {
            eprint!("{prompt}");
            let _ = std::io::stderr().flush();
            tokio::task::spawn_blocking(read_line).await.ok().flatten().map(|line| line.trim().to_owned())
        })
    }

    fn progress(&self, message: &str) {
        eprintln!("{message}");
    }
}

/// Hands `url` to the user's browser: `$BROWSER` when set, else the desktop's opener. Failing is fine: the
/// address is printed.
pub(super) fn open_browser(url: &str) {
    let opener = std::env::var("BROWSER").ok().filter(|browser| !browser.trim().is_empty());
    let opener = opener.unwrap_or_else(|| if cfg!(target_os = "macos") { "open" } else { "xdg-open" }.to_owned());
    let mut words = opener.split_whitespace();
    let Some(program) = words.next() else { return };
    let _ = std::process::Command::new(program)
        .args(words)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
