//! `pi-scale`: pi (agents/pi.yaml, at compatibility level 0.73 as the end-to-end tests run it) with the
//! scale-out commands of pi-temporal, written the `#[agent]` way. It is built with the tests, in the
//! workspace, so the scale-out tests need no second compile of the runtime. With `PI_SCALE_AGENT=triage`
//! it is agents/triage.yaml instead (an agent with an output schema), reading its settings from
//! `PI_CODING_AGENT_DIR` as pi does, so the same test set-up serves both.

use std::process::ExitCode;

use pi_macros::agent;

#[agent("../agents/pi.yaml")]
struct Pi;

#[agent("../agents/triage.yaml")]
struct Triage;

fn main() -> ExitCode {
    let mut definition = match std::env::var("PI_SCALE_AGENT").as_deref() {
        Ok("triage") => {
            let mut triage = Triage::definition();
            triage.agent_dir_env = Pi::definition().agent_dir_env;
            triage
        }
        _ => Pi::definition(),
    };
    // As `pi_gen_tests::agent_binary("pi")` builds it: the level the end-to-end tests were written against.
    definition.pi_compat = pi_runtime::protocol::PiCompat::V0_73;
    pi_temporal::cli::run(definition)
}
