//! Files compiled into the binary: skill directories, prompt-template directories, inline templates and
//! hook scripts, lowered to an `EmbeddedResources` expression whose contents come from `include_bytes!`.

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use super::LowerContext;
use crate::error::SpecError;
use crate::spec::AgentSpec;

/// Where an embedded file's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbeddedSource {
    /// A file next to the YAML, included with `include_bytes!` (so editing it rebuilds).
    File(PathBuf),
    /// Text generated from the YAML itself (inline prompt templates).
    Text(String),
}

/// Every embedded file as (relative path in the binary, source), plus the skill and prompt roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmbeddedFiles {
    pub files: Vec<(String, EmbeddedSource)>,
    pub skill_dirs: Vec<String>,
    pub prompt_dirs: Vec<String>,
    /// Each skill and prompt root with the directory its author wrote in the YAML, for run-time messages.
    pub source_dirs: Vec<(String, String)>,
}

/// Directories never embedded: version control and package caches.
const SKIPPED_DIRS: [&str; 2] = ["node_modules", "target"];

/// Collects the files the YAML's `skills`, `prompts` and `hooks` sections reference.
pub fn embedded_files(spec: &AgentSpec, ctx: &LowerContext) -> Result<EmbeddedFiles, SpecError> {
    let base = ctx.spec_dir();
    let mut embedded = EmbeddedFiles::default();
    for (index, dir) in spec.skills.iter().flat_map(|skills| &skills.dirs).enumerate() {
        let root = format!("skills/{index}");
        let mut found = Vec::new();
        walk(&base.join(dir), "", true, &mut found)?;
        embedded
            .files
            .extend(found.into_iter().map(|(rel, path)| (format!("{root}/{rel}"), EmbeddedSource::File(path))));
        embedded.source_dirs.push((root.clone(), author_dir(dir)));
        embedded.skill_dirs.push(root);
    }
    let prompts = spec.prompts.as_ref();
    for (index, dir) in prompts.iter().flat_map(|prompts| &prompts.dirs).enumerate() {
        let root = format!("prompts/{index}");
        let mut found = Vec::new();
        walk(&base.join(dir), "", false, &mut found)?;
        let templates = found.into_iter().filter(|(rel, _)| rel.ends_with(".md"));
        embedded.files.extend(templates.map(|(rel, path)| (format!("{root}/{rel}"), EmbeddedSource::File(path))));
        embedded.source_dirs.push((root.clone(), author_dir(dir)));
        embedded.prompt_dirs.push(root);
    }
    let inline = prompts.map(|prompts| prompts.templates.as_slice()).unwrap_or_default();
    if !inline.is_empty() {
        for template in inline {
            let mut text = String::new();
            if let Some(description) = &template.description {
                let quoted = serde_json::to_string(description).unwrap_or_default();
                text.push_str(&format!("---\ndescription: {quoted}\n---\n"));
            }
            text.push_str(&template.content);
            embedded.files.push((format!("prompts/inline/{}.md", template.name), EmbeddedSource::Text(text)));
        }
        embedded.prompt_dirs.push("prompts/inline".to_owned());
    }
    for (rel, path) in super::hook_scripts(spec, ctx).into_iter().flatten() {
        if !embedded.files.iter().any(|(taken, _)| *taken == rel) {
            embedded.files.push((rel, EmbeddedSource::File(path)));
        }
    }
    Ok(embedded)
}

/// A YAML directory entry as shown in messages: `./skills/` is `skills`.
fn author_dir(dir: &str) -> String {
    let trimmed = dir.trim_end_matches('/');
    let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
    if trimmed.is_empty() { ".".to_owned() } else { trimmed.to_owned() }
}

/// Regular, non-hidden files under `dir`, sorted, as (relative path with `/`, absolute path).
fn walk(dir: &Path, prefix: &str, recursive: bool, out: &mut Vec<(String, PathBuf)>) -> Result<(), SpecError> {
    let read = std::fs::read_dir(dir).map_err(|source| SpecError::Read { path: dir.to_path_buf(), source })?;
    let mut entries: Vec<_> = read.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        if path.is_dir() {
            if recursive && !SKIPPED_DIRS.contains(&name.as_str()) {
                walk(&path, &rel, true, out)?;
            }
        } else if path.is_file() {
            let absolute = std::path::absolute(&path).unwrap_or(path);
            out.push((rel, absolute));
        }
    }
    Ok(())
}

/// A hash of every path, content and executable bit: names the directory the binary unpacks its files to.
fn content_hash(files: &[(String, Vec<u8>, bool)]) -> String {
    let mut hash = crate::hash::Fnv::default();
    for (path, contents, executable) in files {
        hash.feed_framed(path.as_bytes());
        hash.feed_framed(contents);
        hash.feed_framed(&[u8::from(*executable)]);
    }
    hash.hex()
}

/// Whether the file has an executable bit (it is unpacked with one, so scripts stay runnable).
fn is_executable(path: &Path) -> Result<bool, SpecError> {
    let metadata = std::fs::metadata(path).map_err(|source| SpecError::Read { path: path.to_path_buf(), source })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(metadata.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        Ok(false)
    }
}

/// The `EmbeddedResources` expression.
pub(super) fn resources_tokens(spec: &AgentSpec, ctx: &LowerContext) -> Result<TokenStream, SpecError> {
    let runtime = &ctx.runtime;
    let embedded = embedded_files(spec, ctx)?;
    if embedded.files.is_empty() {
        return Ok(quote!(#runtime::EmbeddedResources::default()));
    }
    let mut hashed = Vec::with_capacity(embedded.files.len());
    let mut files = Vec::with_capacity(embedded.files.len());
    for (rel, source) in &embedded.files {
        let (bytes, contents, executable) = match source {
            EmbeddedSource::File(path) => {
                let bytes = std::fs::read(path).map_err(|source| SpecError::Read { path: path.clone(), source })?;
                let literal = path.to_string_lossy().into_owned();
                (bytes, quote!(include_bytes!(#literal)), is_executable(path)?)
            }
            EmbeddedSource::Text(text) => {
                let literal = proc_macro2::Literal::byte_string(text.as_bytes());
                (text.as_bytes().to_vec(), quote!(#literal), false)
            }
        };
        hashed.push((rel.clone(), bytes, executable));
        files.push(quote! {
            #runtime::EmbeddedFile {
                path: #rel.to_owned(),
                contents: ::std::borrow::Cow::Borrowed(#contents),
                executable: #executable,
            }
        });
    }
    let hash = content_hash(&hashed);
    let skill_dirs = &embedded.skill_dirs;
    let prompt_dirs = &embedded.prompt_dirs;
    let source_dirs = embedded.source_dirs.iter().map(|(root, dir)| quote!((#root.to_owned(), #dir.to_owned())));
    Ok(quote! {
        #runtime::EmbeddedResources {
            hash: #hash.to_owned(),
            files: vec![#(#files),*],
            skill_dirs: vec![#(#skill_dirs.to_owned()),*],
            prompt_dirs: vec![#(#prompt_dirs.to_owned()),*],
            source_dirs: vec![#(#source_dirs),*],
        }
    })
}

/// Every file the generated code includes (the YAML's own file aside), for rebuild tracking.
pub fn referenced_files(spec: &AgentSpec, ctx: &LowerContext) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = spec
        .system_prompt
        .as_ref()
        .and_then(|prompt| prompt.template.as_ref())
        .map(|template| ctx.spec_dir().join(template))
        .into_iter()
        .collect();
    if let Ok(embedded) = embedded_files(spec, ctx) {
        files.extend(embedded.files.into_iter().filter_map(|(_, source)| match source {
            EmbeddedSource::File(path) => Some(path),
            EmbeddedSource::Text(_) => None,
        }));
    }
    for subagent in &spec.loaded_subagents {
        let child = LowerContext { runtime: ctx.runtime.clone(), spec_path: subagent.spec_path.clone() };
        files.push(subagent.spec_path.clone());
        files.extend(referenced_files(&subagent.spec, &child));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_changes_with_any_path_or_byte() {
        let base = vec![("a/SKILL.md".to_owned(), b"one".to_vec(), false)];
        let renamed = vec![("b/SKILL.md".to_owned(), b"one".to_vec(), false)];
        let edited = vec![("a/SKILL.md".to_owned(), b"onf".to_vec(), false)];
        let executable = vec![("a/SKILL.md".to_owned(), b"one".to_vec(), true)];
        assert_eq!(content_hash(&base), content_hash(&base.clone()));
        assert_ne!(content_hash(&base), content_hash(&renamed));
        assert_ne!(content_hash(&base), content_hash(&edited));
        assert_ne!(content_hash(&base), content_hash(&executable));
        assert_eq!(content_hash(&base).len(), 16);
    }
}
