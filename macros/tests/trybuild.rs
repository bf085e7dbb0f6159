//! trybuild cases of `#[agent]`: agents that compile and run, and mistakes that must not compile, with
//! the compiler's messages committed next to them (tests/ui/fail/*.stderr; `TRYBUILD=overwrite` rewrites
//! them). The runtime is a dev-dependency renamed to `engine`, so every case also proves that the macro
//! finds a renamed runtime.

#[test]
fn ui() {
    // The test crates trybuild writes live under target/, but their YAML files live here; the macro takes
    // its base directory from this variable when it is set. Set once, before any other thread exists.
    // SAFETY: this test binary runs this single test, so no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("PI_MACROS_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR")) };
    // trybuild's test crate does not take the workspace's profiles, so its cargo would build every
    // dependency with full debug info (3.5 GB of target/tests for two runnable cases). None is needed here.
    // SAFETY: as above.
    unsafe { std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "false") };
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
