//! The frontmatter reader of skills and prompt templates, from the `pi-frontmatter` crate (shared with
//! pi-gen's build-time checks, so both read a file the same way).

pub use pi_frontmatter::{
    Frontmatter, FrontmatterError, FrontmatterValue, js_trim, parse_frontmatter, split_frontmatter, strip_frontmatter,
};
