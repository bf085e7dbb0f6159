//! `pi-gen test agent.yaml [FILES]`: an agent author's tests. Each case of a test file names prompts, the
//! scripted model's responses (the mock server's script format, inline or a file `--record` wrote) and
//! what must happen; every case runs the built agent against the mock on 127.0.0.1 in a scratch directory
//! of its own, and the report shows each failed expectation with its place in the test file and a diff.

mod case_file;
mod expect;
mod observe;
mod report;

use std::io::Write;
use std::path::{Path, PathBuf};

use case_file::{TestCase, load_test_file};
use expect::check;
use observe::{AgentUnderTest, run_case};

use crate::mock_model::MockTarget;
use pi_codegen::error::SpecError;
use pi_codegen::yaml::load_spec;

/// How `pi-gen test` runs.
#[derive(Debug, Clone, Default)]
pub struct TestOptions {
    /// Build the agent with optimizations.
    pub release: bool,
    /// Keep the scratch directory of every failed case (and print where it is).
    pub keep: bool,
    /// Run only the cases whose name contains this text.
    pub filter: Option<String>,
    /// Test this binary instead of building the YAML (an `#[agent]` crate's, which cargo builds).
    pub binary: Option<PathBuf>,
}

/// Counts of a test run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestSummary {
    pub passed: usize,
    pub failed: usize,
}

/// The test files of an agent when none are named: `tests/*.yaml` beside its YAML, sorted.
pub fn default_test_files(spec_path: &Path) -> Vec<PathBuf> {
    let dir = spec_path.parent().unwrap_or_else(|| Path::new("")).join("tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "yaml" || ext == "yml"))
        .collect();
    files.sort();
    files
}

/// Builds the agent (into the run cache, unless it is there) and runs every case of `files`, reporting
/// to `out` as it goes.
pub fn run_tests(
    spec_path: &Path,
    files: &[PathBuf],
    options: &TestOptions,
    out: &mut dyn Write,
) -> Result<TestSummary, SpecError> {
    // Every test file is read before anything is built, so a mistake in one shows at once.
    let mut test_files = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        match load_test_file(file) {
            Ok(test_file) => test_files.push(test_file),
            Err(SpecError::Invalid(located)) => problems.extend(located),
            Err(other) => return Err(other),
        }
    }
    if !problems.is_empty() {
        return Err(SpecError::Invalid(problems));
    }
    let spec = load_spec(spec_path)?;
    let binary = match &options.binary {
        Some(binary) if binary.is_file() => std::path::absolute(binary).unwrap_or_else(|_| binary.clone()),
        Some(binary) => {
            return Err(SpecError::Scaffold(format!("{} is not a file; build the agent first", binary.display())));
        }
        None => {
            let binary = pi_codegen::run_cache::cached_binary(spec_path, options.release)?;
            if !binary.is_file() {
                let mut request = pi_codegen::BuildRequest::new(spec_path).with_output(&binary);
                request.release = options.release;
                pi_codegen::build_agent(&request)?;
            }
            binary
        }
    };
    let agent = AgentUnderTest { binary, agent_dir_env: spec.agent_dir_env(), target: MockTarget::for_spec(&spec) };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| SpecError::Scaffold(format!("cannot start the async runtime: {error}")))?;
    let mut summary = TestSummary::default();
    for test_file in &test_files {
        let selected: Vec<&TestCase> = test_file
            .cases
            .iter()
            .filter(|case| options.filter.as_ref().is_none_or(|filter| case.name.contains(filter.as_str())))
            .collect();
        let _ = writeln!(out, "{}: {} case(s)", test_file.path.display(), selected.len());
        for case in selected {
            let scratch = tempfile::Builder::new()
                .prefix("pi-gen-test-")
                .tempdir()
                .map_err(|source| SpecError::Write { path: std::env::temp_dir(), source })?;
            let observed = runtime.block_on(run_case(&agent, case, scratch.path())).map_err(|error| {
                SpecError::Scaffold(format!(
                    "case \"{}\" of {} could not run {}: {error}",
                    case.name,
                    test_file.path.display(),
                    agent.binary.display()
                ))
            })?;
            let failures = check(case, &observed);
            if failures.is_empty() {
                summary.passed += 1;
                let _ = writeln!(out, "ok      {} ({})", case.name, report::seconds(observed.duration));
            } else {
                summary.failed += 1;
                let _ = writeln!(out, "FAILED  {} ({})", case.name, report::seconds(observed.duration));
                for failure in &failures {
                    let _ = write!(out, "{}", report::failure_text(test_file, failure));
                }
                if options.keep {
                    let kept = scratch.keep();
                    let _ = writeln!(out, "        scratch directory kept: {}", kept.display());
                }
            }
        }
    }
    let _ = writeln!(out, "\n{} passed, {} failed", summary.passed, summary.failed);
    Ok(summary)
}
