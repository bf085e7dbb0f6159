//! The YAML declares Rust tools, but the struct does not implement them.

use pi_macros::agent;

#[agent("tests/ui/two_tools.yaml")]
struct Shelf;

fn main() {}
