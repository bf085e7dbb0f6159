//! The YAML file does not exist.

use pi_macros::agent;

#[agent("tests/ui/nowhere.yaml")]
struct Shelf;

fn main() {}
