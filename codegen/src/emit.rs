//! Emitting the generated crate: Cargo.toml and README from templates/, main.rs from [`crate::lower`].

use std::path::{Path, PathBuf};

use minijinja::{Environment, context};

use crate::error::SpecError;
use crate::lower::{LowerContext, main_rs};
use crate::spec::AgentSpec;

const CARGO_TOML_TEMPLATE: &str = include_str!("../../templates/Cargo.toml.j2");
const README_TEMPLATE: &str = include_str!("../../templates/README.md.j2");

/// Where the generated crate finds its dependencies.
#[derive(Debug, Clone)]
pub struct EmitOptions {
    /// The pi-runtime crate directory (pi-temporal is its sibling).
    pub runtime_path: PathBuf,
    /// The binary cargo builds; the agent's name unless features make it a variant (see
    /// [`crate::build::AgentFeature`]).
    pub bin_name: Option<String>,
    /// A Cargo.lock to start from, so the crate uses the versions the workspace was tested with.
    pub lock_file: Option<PathBuf>,
}

/// The pi-runtime directory next to this crate in the source tree (overridable with `PI_GEN_RUNTIME_PATH`).
pub fn default_runtime_path() -> PathBuf {
    match std::env::var_os("PI_GEN_RUNTIME_PATH").filter(|value| !value.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => workspace_root().join("runtime"),
    }
}

/// The pi-gen workspace this crate was built from.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or_else(|| manifest_dir.to_path_buf())
}

impl Default for EmitOptions {
    fn default() -> Self {
        let runtime_path = default_runtime_path();
        let lock_file = runtime_path.parent().map(|root| root.join("Cargo.lock")).filter(|lock| lock.is_file());
        Self { runtime_path, bin_name: None, lock_file }
    }
}

/// Writes the crate for `spec` (read from `source`) into `crate_dir`.
pub fn emit_crate(spec: &AgentSpec, source: &Path, crate_dir: &Path, options: &EmitOptions) -> Result<(), SpecError> {
    let source_name = source.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let runtime_path = std::fs::canonicalize(&options.runtime_path).unwrap_or_else(|_| options.runtime_path.clone());
    let temporal_path = runtime_path.parent().map(|root| root.join("temporal")).unwrap_or_default();
    let mut env = Environment::new();
    env.set_keep_trailing_newline(true);
    let values = context! {
        name => &spec.name,
        version => env!("CARGO_PKG_VERSION"),
        description => spec.description.as_deref().unwrap_or(""),
        source => &source_name,
        runtime_path => runtime_path.to_string_lossy(),
        temporal_path => temporal_path.to_string_lossy(),
        bin_name => options.bin_name.as_deref().unwrap_or(&spec.name),
        agent_dir_env => spec.agent_dir_env(),
        custom_tools => spec.custom_tools().iter().map(|tool| (tool.name.clone(), tool.description.clone())).collect::<Vec<_>>(),
        config_dir => spec.config_dir(),
    };
    let cargo_toml = render(&env, "Cargo.toml.j2", CARGO_TOML_TEMPLATE, &values)?;
    let readme = render(&env, "README.md.j2", README_TEMPLATE, &values)?;
    let rust_tools: Vec<&str> =
        spec.custom_tools().iter().filter(|tool| tool.handler.is_some()).map(|tool| tool.name.as_str()).collect();
    if !rust_tools.is_empty() {
        return Err(SpecError::NeedsMacro { tools: rust_tools.join(", ") });
    }
    let main = main_rs(spec, &LowerContext::new(source))?;
    write_if_changed(&crate_dir.join("Cargo.toml"), &cargo_toml)?;
    write_if_changed(&crate_dir.join("README.md"), &readme)?;
    write_if_changed(&crate_dir.join("src").join("main.rs"), &main)?;
    // The workspace's lock file: the crate builds with the versions pi-gen was tested with and needs no
    // registry access for them. Cargo adds the agent's own entry to the copy, so the copy is refreshed only
    // when the workspace's lock itself changed (a stamp records which one was copied).
    if let Some(lock) = &options.lock_file {
        let text = std::fs::read_to_string(lock).map_err(|source| SpecError::Read { path: lock.clone(), source })?;
        let mut hash = crate::hash::Fnv::default();
        hash.feed(text.as_bytes());
        let stamp = format!("{}\n", hash.hex());
        let stamp_path = crate_dir.join("Cargo.lock.source");
        if std::fs::read_to_string(&stamp_path).ok().as_deref() != Some(stamp.as_str()) {
            write_if_changed(&crate_dir.join("Cargo.lock"), &text)?;
            write_if_changed(&stamp_path, &stamp)?;
        }
    }
    Ok(())
}

fn render(env: &Environment<'_>, name: &str, template: &str, values: &minijinja::Value) -> Result<String, SpecError> {
    env.render_str(template, values.clone())
        .map_err(|error| SpecError::Template { name: name.to_owned(), message: error.to_string() })
}

/// Writes only when the content differs, so cargo does not rebuild an unchanged crate; through a temporary
/// file and a rename, so a concurrent build never reads half a file.
fn write_if_changed(path: &Path, content: &str) -> Result<(), SpecError> {
    if std::fs::read_to_string(path).is_ok_and(|existing| existing == content) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| SpecError::Write { path: parent.to_path_buf(), source })?;
    }
    let staging = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&staging, content).map_err(|source| SpecError::Write { path: staging.clone(), source })?;
    std::fs::rename(&staging, path).map_err(|source| SpecError::Write { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_spec;

    #[test]
    fn emits_a_crate_that_names_the_runtime() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = parse_spec(Path::new("pi.yaml"), "version: 1\nname: pi\ndescription: \"A \\\"quoted\\\" agent\"\n")
            .expect("valid");
        let options = EmitOptions {
            runtime_path: PathBuf::from("/opt/pi-runtime"),
            bin_name: Some("pi--temporal".to_owned()),
            lock_file: None,
        };
        emit_crate(&spec, Path::new("agents/pi.yaml"), dir.path(), &options).expect("emits");
        let cargo = std::fs::read_to_string(dir.path().join("Cargo.toml")).expect("Cargo.toml");
        assert!(cargo.contains("[package]\nname = \"pi\""), "{cargo}");
        assert!(cargo.contains("[[bin]]\nname = \"pi--temporal\""), "{cargo}");
        assert!(cargo.contains("pi-runtime = { path = \"/opt/pi-runtime\" }"), "{cargo}");
        assert!(cargo.contains("description = \"A \\\"quoted\\\" agent\""), "{cargo}");
        assert!(cargo.contains("\n[workspace]\n"), "{cargo}");
        // Scale-out is an optional feature of every agent crate: pi-temporal beside the runtime.
        assert!(cargo.contains("pi-temporal = { path = \"/opt/temporal\", optional = true }"), "{cargo}");
        assert!(cargo.contains("temporal = [\"dep:pi-temporal\"]"), "{cargo}");
        let main = std::fs::read_to_string(dir.path().join("src/main.rs")).expect("main.rs");
        assert!(main.contains("#[cfg(not(feature = \"temporal\"))]\nfn main()"), "{main}");
        assert!(main.contains("::pi_temporal::cli::run(definition())"), "{main}");
        let readme = std::fs::read_to_string(dir.path().join("README.md")).expect("README");
        assert!(readme.contains("$PI_AGENT_DIR/models.json"), "{readme}");
        assert!(!readme.contains("Tools of its own"), "{readme}");
    }

    #[test]
    fn the_readme_lists_custom_tools_and_rust_tools_need_the_macro() {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = EmitOptions { runtime_path: PathBuf::from("/opt/pi-runtime"), bin_name: None, lock_file: None };
        let yaml = "version: 1\nname: t\ntools:\n  custom:\n    - { name: run_tests, description: Run the tests, command: cargo test }\n";
        let spec = parse_spec(Path::new("t.yaml"), yaml).expect("valid");
        emit_crate(&spec, Path::new("t.yaml"), dir.path(), &options).expect("emits");
        let readme = std::fs::read_to_string(dir.path().join("README.md")).expect("README");
        assert!(
            readme.ends_with(
                "in pi's format.\n\nTools of its own, besides the built-ins:\n\n- `run_tests`: Run the tests\n"
            ),
            "{readme:?}"
        );
        let rust = "version: 1\nname: t\ntools:\n  custom:\n    - { name: lookup, description: d, handler: rust }\n";
        let spec = parse_spec(Path::new("t.yaml"), rust).expect("valid");
        let error = emit_crate(&spec, Path::new("t.yaml"), dir.path(), &options).expect_err("needs the macro");
        assert!(error.to_string().contains("implemented in Rust (`handler: rust`): lookup;"), "{error}");
    }
}
