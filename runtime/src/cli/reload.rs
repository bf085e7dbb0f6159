//! `/reload`: what a run took from files, read again without restarting: settings.json (retry, compaction,
//! theme), skills, prompt templates, context files (AGENTS.md), SYSTEM.md / APPEND_SYSTEM.md and models.json.

use std::path::PathBuf;

use super::args::CliArgs;
use super::error::CliError;
use super::model_catalog::ModelCatalog;
use super::paths::project_dir;
use super::resources::{Resources, collect_resources};
use super::settings::Settings;
use super::setup::prompt_builder;
use crate::AgentDefinition;
use crate::agent_session::SessionSettings;
use crate::prompt::SystemPromptBuilder;

/// Everything needed to read the files again: the agent, its flags and where it runs.
pub struct Reloader {
    definition: AgentDefinition,
    args: CliArgs,
    agent_dir: PathBuf,
    cwd: PathBuf,
    /// The provider `--api-key` was given for (the start model's).
    key_provider: Option<String>,
}

/// What the files say now.
pub struct Reloaded {
    pub resources: Resources,
    pub prompt_builder: SystemPromptBuilder,
    pub session_settings: SessionSettings,
    /// The SDK-level timeout and retries (`retry.provider`).
    pub provider_retry: crate::ai::ProviderRetry,
    /// Thinking-token budgets (`thinkingBudgets`).
    pub thinking_budgets: crate::ai::ThinkingBudgets,
    pub models: ModelCatalog,
    /// The `theme` setting.
    pub theme: Option<String>,
    /// Problems found on the way (a settings file that does not parse counts as empty, as at start-up).
    pub warnings: Vec<String>,
}

impl Reloader {
    pub fn new(
        definition: &AgentDefinition,
        args: &CliArgs,
        agent_dir: PathBuf,
        cwd: PathBuf,
        key_provider: Option<String>,
    ) -> Self {
        Self { definition: definition.clone(), args: args.clone(), agent_dir, cwd, key_provider }
    }

    /// The models as models.json and auth.json say now (after `/login` or `/logout`).
    pub fn models(&self) -> Result<ModelCatalog, CliError> {
        let project = self.args.uses_project_files().then(|| project_dir(&self.definition, &self.cwd));
        let (settings, _) = Settings::load(&self.agent_dir, project.as_deref());
        let pi_compat = super::RunDefaults::new(&self.definition, &settings, self.args.pi_compat).0.pi_compat;
        self.catalog(pi_compat, &settings)
    }

    fn catalog(&self, pi_compat: crate::protocol::PiCompat, settings: &Settings) -> Result<ModelCatalog, CliError> {
        let (definition, args) = (&self.definition, &self.args);
        Ok(ModelCatalog::load(definition, &self.agent_dir, args.api_key.as_deref(), self.key_provider.as_deref())?
            .with_pi_compat(pi_compat)
            .with_scope(&super::model_scope::scope_patterns(args.models.as_deref(), settings)))
    }

    /// Reads every file again. A models.json or flag file that no longer parses fails the whole reload (the
    /// run goes on as it was); other problems come back as warnings.
    pub fn reload(&self) -> Result<Reloaded, CliError> {
        let (definition, args) = (&self.definition, &self.args);
        let project = args.uses_project_files().then(|| project_dir(definition, &self.cwd));
        let (settings, problems) = Settings::load(&self.agent_dir, project.as_deref());
        let mut warnings: Vec<String> = problems.iter().map(ToString::to_string).collect();
        let (resources, resource_warnings) = collect_resources(definition, args, &self.agent_dir, &self.cwd, &settings);
        warnings.extend(resource_warnings);
        let pi_compat = super::RunDefaults::new(definition, &settings, args.pi_compat).0.pi_compat;
        let prompt_builder = prompt_builder(definition, args, &self.agent_dir, &self.cwd, &resources, pi_compat, true)?;
        let models = self.catalog(pi_compat, &settings)?;
        Ok(Reloaded {
            resources,
            prompt_builder,
            session_settings: super::setup::session_settings(definition, &settings),
            provider_retry: super::setup::provider_retry(settings.value("retry")),
            thinking_budgets: crate::ai::ThinkingBudgets::from_settings(settings.value("thinkingBudgets")),
            models,
            theme: settings.string("theme").map(str::to_owned),
            warnings,
        })
    }
}
