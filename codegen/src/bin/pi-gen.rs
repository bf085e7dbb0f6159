//! The pi-gen command.
fn main() {}
