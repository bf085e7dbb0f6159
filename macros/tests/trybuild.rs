//! trybuild cases of `#[agent]`: mistakes that must not compile, with the compiler's messages committed
//! next to them (tests/ui/fail/*.stderr; `TRYBUILD=overwrite` rewrites them). Agents that must compile and
//! work are ordinary tests (agent_types.rs): with only failing cases, trybuild checks instead of building,
//! which spares CI a second full debug build of the runtime (about 7 of its minutes on 2 cores).

#[test]
fn ui() {
    // The test crates trybuild writes live under target/, but their YAML files live here; the macro takes
    // its base directory from this variable when it is set. Set once, before any other thread exists.
    // SAFETY: this test binary runs this single test, so no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("PI_MACROS_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR")) };
    // trybuild's test crate does not take the workspace's profiles; its build scripts and proc macros,
    // which a check still compiles, need no debug info.
    // SAFETY: as above.
    unsafe { std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "false") };
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
}
