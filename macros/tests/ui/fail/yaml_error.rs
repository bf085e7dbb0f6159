//! A mistyped key in the YAML is reported at the attribute, with the file, line and column.

use pi_macros::agent;

#[agent("tests/ui/bad.yaml")]
struct Shelf;

fn main() {}
