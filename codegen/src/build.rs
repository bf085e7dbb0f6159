//! `pi-gen build`: generate the crate and compile it with cargo into a shared target directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::emit::{EmitOptions, emit_crate, workspace_root};
use crate::error::SpecError;
use crate::yaml::load_spec;

/// What to build and where.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    pub spec_path: PathBuf,
    /// The binary lands in `out_dir/<name>`; the generated crate in `out_dir/build/<name>/`.
    pub out_dir: PathBuf,
    pub release: bool,
    /// Shared cargo target directory (default: [`default_target_dir`]).
    pub target_dir: Option<PathBuf>,
    pub emit: EmitOptions,
}

impl BuildRequest {
    pub fn new(spec_path: impl Into<PathBuf>, out_dir: impl Into<PathBuf>) -> Self {
        Self {
            spec_path: spec_path.into(),
            out_dir: out_dir.into(),
            release: false,
            target_dir: None,
            emit: EmitOptions::default(),
        }
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

/// Generates and compiles the agent; returns the path of the binary.
pub fn build_agent(request: &BuildRequest) -> Result<PathBuf, SpecError> {
    let spec = load_spec(&request.spec_path)?;
    let crate_dir = request.out_dir.join("build").join(&spec.name);
    emit_crate(&spec, &request.spec_path, &crate_dir, &request.emit)?;
    let target_dir = request.target_dir.clone().unwrap_or_else(default_target_dir);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.arg("build").arg("--manifest-path").arg(crate_dir.join("Cargo.toml")).env("CARGO_TARGET_DIR", &target_dir);
    if request.release {
        command.arg("--release");
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
    let built = target_dir.join(profile).join(&spec.name);
    let binary = request.out_dir.join(&spec.name);
    install(&built, &binary)?;
    Ok(binary)
}

/// Copies the binary next to its final name and renames it into place, so a running copy is never
/// overwritten in the middle.
fn install(built: &Path, binary: &Path) -> Result<(), SpecError> {
    let staging = binary.with_extension(format!("partial-{}", std::process::id()));
    std::fs::copy(built, &staging).map_err(|source| SpecError::Write { path: staging.clone(), source })?;
    std::fs::rename(&staging, binary).map_err(|source| SpecError::Write { path: binary.to_path_buf(), source })
}
