//! pi-codegen: YAML agent spec to generated Rust crate.
