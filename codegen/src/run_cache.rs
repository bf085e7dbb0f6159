//! `pi-gen run`: where a spec's binary is cached. The key hashes everything the binary depends on: pi-gen's
//! version, the YAML, every file it embeds, the runtime's location and the profile.

use std::path::{Path, PathBuf};

use crate::build::default_target_dir;
use crate::emit::default_runtime_path;
use crate::error::SpecError;
use crate::hash::Fnv;
use crate::lower::{LowerContext, referenced_files};
use crate::yaml::load_spec;

/// The cached binary's path for the spec at `spec_path` (validated on the way).
pub fn cached_binary(spec_path: &Path, release: bool) -> Result<PathBuf, SpecError> {
    let spec = load_spec(spec_path)?;
    let text = std::fs::read(spec_path).map_err(|source| SpecError::Read { path: spec_path.to_path_buf(), source })?;
    let mut hash = Fnv::default();
    hash.feed_framed(env!("CARGO_PKG_VERSION").as_bytes());
    hash.feed_framed(default_runtime_path().to_string_lossy().as_bytes());
    hash.feed_framed(&[u8::from(release)]);
    hash.feed_framed(&text);
    for file in referenced_files(&spec, &LowerContext::new(spec_path)) {
        hash.feed_framed(file.to_string_lossy().as_bytes());
        hash.feed_framed(&std::fs::read(&file).unwrap_or_default());
    }
    Ok(default_target_dir().join("run").join(format!("{}-{}", spec.name, hash.hex())).join(&spec.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_follows_the_yaml_and_its_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let yaml = dir.path().join("a.yaml");
        std::fs::create_dir_all(dir.path().join("skills/x")).expect("mkdir");
        std::fs::write(dir.path().join("skills/x/SKILL.md"), "---\ndescription: x\n---\nbody").expect("write");
        std::fs::write(&yaml, "version: 1\nname: a\nskills: { dirs: [skills] }\n").expect("write");
        let first = cached_binary(&yaml, false).expect("key");
        assert_eq!(first, cached_binary(&yaml, false).expect("key"));
        assert_ne!(first, cached_binary(&yaml, true).expect("key"));
        std::fs::write(dir.path().join("skills/x/SKILL.md"), "---\ndescription: x\n---\nchanged").expect("write");
        let after_skill = cached_binary(&yaml, false).expect("key");
        assert_ne!(first, after_skill);
        std::fs::write(&yaml, "version: 1\nname: a\ndescription: d\nskills: { dirs: [skills] }\n").expect("write");
        assert_ne!(after_skill, cached_binary(&yaml, false).expect("key"));
        assert!(first.ends_with("a"));
    }
}
