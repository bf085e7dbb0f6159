//! `pi-gen build`: generate the agent's crate and compile it with cargo into a target directory every
//! agent shares, so pi-runtime compiles once.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::emit::{EmitOptions, emit_crate, workspace_root};
use crate::error::SpecError;
use crate::yaml::load_spec;

/// What to build and where.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    pub spec_path: PathBuf,
    /// Where the binary goes: a file path, or a directory (existing, or written with a trailing `/`) that
    /// receives `<name>`. `None`: `./<name>`.
    pub output: Option<PathBuf>,
    pub release: bool,
    /// Shared cargo target directory (default: [`default_target_dir`]).
    pub target_dir: Option<PathBuf>,
    /// Optional parts compiled in (`pi-gen build --features temporal`).
    pub features: Vec<AgentFeature>,
    pub emit: EmitOptions,
}

/// An optional part of a generated agent, a cargo feature of its crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum AgentFeature {
    /// Scale-out: sessions in Postgres, runs on Temporal (`store`, `worker`, `serve --engine temporal`).
    Temporal,
}

impl AgentFeature {
    pub const ALL: [AgentFeature; 1] = [AgentFeature::Temporal];

    /// The feature's name, as `--features` takes it and the crate declares it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Temporal => "temporal",
        }
    }
}

impl std::str::FromStr for AgentFeature {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|feature| feature.name() == text).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|feature| feature.name()).collect();
            format!("unknown feature {text:?}; the features are: {}", known.join(", "))
        })
    }
}

impl BuildRequest {
    pub fn new(spec_path: impl Into<PathBuf>) -> Self {
        Self {
            spec_path: spec_path.into(),
            output: None,
            release: false,
            target_dir: None,
            features: Vec::new(),
            emit: EmitOptions::default(),
        }
    }

    /// The same request with the binary written to `output`.
    pub fn with_output(mut self, output: impl Into<PathBuf>) -> Self {
        self.output = Some(output.into());
        self
    }
}

/// The target directory every generated agent shares, so pi-runtime compiles once:
/// `$PI_GEN_TARGET_DIR`, else `target/agents` in the pi-gen workspace.
pub fn default_target_dir() -> PathBuf {
    match std::env::var_os("PI_GEN_TARGET_DIR").filter(|value| !value.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("target").join("agents"),
    }
}

/// Where the binary of agent `name` goes for `output`.
pub fn binary_path(output: Option<&Path>, name: &str) -> PathBuf {
    match output {
        None => PathBuf::from(".").join(name),
        Some(path) if path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/') => path.join(name),
        Some(path) => path.to_path_buf(),
    }
}

/// Generates and compiles the agent; returns the path of the binary.
pub fn build_agent(request: &BuildRequest) -> Result<PathBuf, SpecError> {
    let spec = load_spec(&request.spec_path)?;
    let target_dir = request.target_dir.clone().unwrap_or_else(default_target_dir);
    // A build with features is a crate (and binary) of its own beside the plain one: the two share the
    // target directory, and neither rebuilds because the other was built last.
    let (variant, features) = variant_name(&spec.name, &request.features);
    let crate_dir = target_dir.join("crates").join(&variant);
    let emit = EmitOptions { bin_name: Some(variant.clone()), ..request.emit.clone() };
    emit_crate(&spec, &request.spec_path, &crate_dir, &emit)?;
    // A destination that cannot be created fails now, not after minutes of compiling.
    let binary = binary_path(request.output.as_deref(), &spec.name);
    prepare_destination(&binary)?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.arg("build").arg("--manifest-path").arg(crate_dir.join("Cargo.toml")).env("CARGO_TARGET_DIR", &target_dir);
    if request.release {
        command.arg("--release");
    }
    if !features.is_empty() {
        let names: Vec<&str> = features.iter().map(|feature| feature.name()).collect();
        command.arg("--features").arg(names.join(","));
    }
    // Settings of an enclosing cargo invocation (tests run under cargo) must not leak into this build.
    for variable in
        ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME", "CARGO_PRIMARY_PACKAGE", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS"]
    {
        command.env_remove(variable);
    }
    let status = command.status().map_err(SpecError::CargoSpawn)?;
    if !status.success() {
        return Err(SpecError::CargoFailed { status: status.to_string() });
    }
    let profile = if request.release { "release" } else { "debug" };
    let built = target_dir.join(profile).join(&variant);
    install(&built, &binary)?;
    Ok(binary)
}

/// The crate (and cargo binary) name of agent `name` built with `features`: the name itself without
/// features, else `<name>--<feature>...` in a fixed order; and the features, sorted and without repeats.
fn variant_name(name: &str, features: &[AgentFeature]) -> (String, Vec<AgentFeature>) {
    let mut features = features.to_vec();
    features.sort();
    features.dedup();
    let mut variant = name.to_owned();
    for feature in &features {
        variant.push_str("--");
        variant.push_str(feature.name());
    }
    (variant, features)
}

/// Creates the directory the binary goes to.
fn prepare_destination(binary: &Path) -> Result<(), SpecError> {
    match binary.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        Some(parent) => {
            std::fs::create_dir_all(parent).map_err(|source| SpecError::Write { path: parent.to_path_buf(), source })
        }
        None => Ok(()),
    }
}

/// Copies the binary next to its final name and renames it into place, so a running copy is never
/// overwritten in the middle.
fn install(built: &Path, binary: &Path) -> Result<(), SpecError> {
    let staging = binary.with_extension(format!("partial-{}", std::process::id()));
    std::fs::copy(built, &staging).map_err(|source| SpecError::Write { path: staging.clone(), source })?;
    std::fs::rename(&staging, binary).map_err(|source| SpecError::Write { path: binary.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_with_features_is_a_crate_of_its_own() {
        assert_eq!(variant_name("coder", &[]), ("coder".to_owned(), vec![]));
        let temporal = AgentFeature::Temporal;
        assert_eq!(variant_name("coder", &[temporal, temporal]), ("coder--temporal".to_owned(), vec![temporal]));
        assert_eq!("temporal".parse::<AgentFeature>(), Ok(temporal));
        let unknown = "kafka".parse::<AgentFeature>().expect_err("unknown");
        assert!(unknown.contains("the features are: temporal"), "{unknown}");
    }

    #[test]
    fn the_output_is_a_file_or_a_directory_for_the_binary() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(binary_path(None, "coder"), PathBuf::from("./coder"));
        assert_eq!(binary_path(Some(dir.path()), "coder"), dir.path().join("coder"));
        assert_eq!(binary_path(Some(Path::new("bin/")), "coder"), PathBuf::from("bin/coder"));
        assert_eq!(binary_path(Some(Path::new("bin/my-coder")), "coder"), PathBuf::from("bin/my-coder"));
    }
}
