//! pi-codegen: agent YAML -> validated spec -> generated Rust crate. The `pi-gen` binary and the
//! `#[agent]` macro are thin layers over this library, which never links the runtime.

pub mod build;
pub mod emit;
pub mod error;
mod hash;
pub mod lower;
pub mod problem;
pub mod run_cache;
pub mod scaffold;
pub mod scaffold_rust;
pub mod schema;
pub mod spec;
pub mod validate;
pub mod yaml;

pub use build::{AgentFeature, BuildRequest, build_agent, default_target_dir};
pub use emit::{EmitOptions, emit_crate};
pub use error::{Located, SpecError};
pub use spec::AgentSpec;
pub use yaml::{load_spec, parse_spec};
