//! `pi-scale`: pi (agents/pi.yaml, at compatibility level 0.73 as the end-to-end tests run it) with the
//! scale-out commands of pi-temporal, written the `#[agent]` way. It is built with the tests, in the
//! workspace, so the scale-out tests need no second compile of the runtime.

use std::process::ExitCode;

use pi_macros::agent;

#[agent("../agents/pi.yaml")]
struct Pi;

fn main() -> ExitCode {
    let mut definition = Pi::definition();
    // As `pi_gen_tests::agent_binary("pi")` builds it: the level the end-to-end tests were written against.
    definition.pi_compat = pi_runtime::protocol::PiCompat::V0_73;
    pi_temporal::cli::run(definition)
}
