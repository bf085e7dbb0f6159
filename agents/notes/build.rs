//! Rebuilds the agent when a skill is added to skills/: `#[agent]` embeds the files it finds there at
//! compile time, and cargo only tracks files that already existed.

fn main() {
    println!("cargo:rerun-if-changed=skills");
}
