//! pi-temporal: pi-gen agents beyond one machine. Sessions are kept in a [`store::SessionStore`] (pi's JSONL
//! files, or Postgres) so that any worker can carry a session on.

pub mod cli;
pub mod client;
pub mod flow;
pub mod serve_engine;
mod serve_turns;
pub mod store;
pub mod worker;
