//! The grep and find tools on a generated 100,000-file tree, next to the `rg` and `fd` commands pi runs for
//! the same calls (same flags, output read the way pi reads it). The tree is built once per run in a
//! temporary directory: a git work tree with sources of mixed sizes across packages, plus `.gitignore`d
//! `node_modules/`, `target/` and `*.log` files.
//!
//! Run: `cargo bench -p pi-runtime --bench search` (set `PI_BENCH_RG` / `PI_BENCH_FD` to pick the binaries;
//! by default `rg` and `fd` or `fdfind` from PATH; comparisons are skipped with a message when missing).

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;

use divan::Bencher;
use pi_runtime::tools::{ToolContext, ToolEnvironment, builtin_tool};
use serde_json::{Value, json};

fn main() {
    let tree = &*TREE;
    eprintln!("search tree: {} files, {} MB, in {}", tree.files, tree.bytes / 1_000_000, tree.root.display());
    divan::main();
    // Statics are never dropped: remove the 500 MB tree here or every run leaves it behind in the temp dir.
    let _ = std::fs::remove_dir_all(tree._dir.path());
}

/// Files in the generated tree.
const FILE_COUNT: usize = 100_000;
/// A word planted in every 997th visible source file (about 85 files), for full-scan searches.
const RARE_WORD: &str = "XYZZY_MARKER";

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    files: usize,
    bytes: usize,
}

static TREE: LazyLock<Tree> = LazyLock::new(build_tree);

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "fn", "let", "mut", "const", "return", "if", "else", "match", "self", "value", "result", "error", "handler",
    "request", "response", "config", "parse", "token", "buffer", "stream", "index", "count", "items", "state", "event",
    "update", "render", "query", "cache", "client", "server", "path", "file", "data", "Option", "Some", "None", "Ok",
    "Err", "String", "Vec", "map", "filter", "async", "await", "impl", "struct", "pub", "use", "=>",
];

/// Source-like text of about `size` bytes; `marker` plants the rare word once.
fn content(rng: &mut Rng, size: usize, marker: bool) -> String {
    let mut text = String::with_capacity(size + 100);
    let mut line = 0;
    while text.len() < size {
        let indent = (rng.below(4) * 4) as usize;
        text.extend(std::iter::repeat_n(' ', indent));
        for _ in 0..3 + rng.below(9) {
            text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            text.push(' ');
        }
        if marker && line == 3 {
            text.push_str(RARE_WORD);
        }
        text.push('\n');
        line += 1;
    }
    text
}

/// A realistic size mix: mostly small files, some medium, a few large.
fn file_size(rng: &mut Rng) -> usize {
    let base = match rng.below(1000) {
        0..700 => 200 + rng.below(1300),
        700..950 => 1500 + rng.below(4500),
        950..995 => 6000 + rng.below(18_000),
        _ => 32_000 + rng.below(96_000),
    };
    base as usize
}

fn build_tree() -> Tree {
    let dir = tempfile::Builder::new().prefix("pi-search-bench").tempdir().expect("temp dir");
    let root = dir.path().join("repo");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut files, mut bytes) = (0usize, 0usize);
    let mut put = |relative: String, text: String| {
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        bytes += text.len();
        files += 1;
        std::fs::write(path, text).expect("write");
    };
    std::fs::create_dir_all(root.join(".git")).expect("mkdir .git");
    put(".gitignore".into(), "node_modules/\ntarget/\n*.log\n".into());
    // Ignored: 10,000 files under node_modules/, 5,000 under target/, 1,200 *.log files among the sources.
    for i in 0..10_000 {
        let size = file_size(&mut rng);
        put(format!("node_modules/lib{:03}/dist/m{i}.js", i / 100), content(&mut rng, size, false));
    }
    for i in 0..5_000 {
        let size = file_size(&mut rng);
        put(format!("target/debug/deps/d{:02}/o{i}.d", i / 200), content(&mut rng, size, false));
    }
    // Everything else is sources in packages: 40 packages x 30 modules x 70 files.
    for visible in 0..FILE_COUNT - 15_001 {
        let (package, module, n) = (visible / 2100, (visible / 70) % 30, visible % 70);
        let dir = format!("packages/pkg{package:02}/src/mod{module:02}");
        let name = match n {
            0 if module == 0 => format!("packages/pkg{package:02}/Cargo.toml"),
            1 => format!("{dir}/f{n}.log"),
            _ => {
                let ext = ["rs", "rs", "rs", "rs", "ts", "ts", "spec.ts", "py", "py", "md"][n % 10];
                format!("{dir}/f{n}.{ext}")
            }
        };
        let size = file_size(&mut rng);
        let text = content(&mut rng, size, visible % 997 == 0);
        put(name, text);
    }
    Tree { _dir: dir, root, files, bytes }
}

/// Runs one of our tools on the tree the way the agent does and returns the text it produced.
fn run_tool(name: &str, args: Value) -> String {
    let tree = &*TREE;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let tool = builtin_tool(name, &ToolEnvironment::new(&tree.root)).expect("tool");
    let result = runtime.block_on(tool.execute(args, ToolContext::new("bench"))).expect("tool result");
    result.content[0].as_text().unwrap_or_default().to_owned()
}

/// A comparison binary from the environment variable or PATH, if it runs.
fn binary(env: &str, names: &[&str]) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os(env) {
        Some(path) => vec![PathBuf::from(path)],
        None => names.iter().map(PathBuf::from).collect(),
    };
    candidates.into_iter().find(|bin| Command::new(bin).arg("--version").output().is_ok_and(|out| out.status.success()))
}

static RG: LazyLock<Option<PathBuf>> = LazyLock::new(|| binary("PI_BENCH_RG", &["rg"]));
static FD: LazyLock<Option<(PathBuf, bool)>> = LazyLock::new(|| {
    let fd = binary("PI_BENCH_FD", &["fd", "fdfind"])?;
    // fd before 8.7 lacks --no-require-git; the tree is a git work tree, so it is not needed there.
    let help = Command::new(&fd).arg("--help").output().ok()?;
    Some((fd, String::from_utf8_lossy(&help.stdout).contains("--no-require-git")))
});

/// pi's rg call: `rg --json --line-number --color=never --hidden [extra] -- pattern root`, reading match
/// events until `limit` and then killing rg, as pi does. Returns the number of matches read.
fn run_rg(rg: &Path, extra: &[&str], pattern: &str, limit: usize) -> usize {
    let root = &TREE.root;
    let mut child = Command::new(rg)
        .args(["--json", "--line-number", "--color=never", "--hidden"])
        .args(extra)
        .arg("--")
        .arg(pattern)
        .arg(root)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn rg");
    let mut matches = 0;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("{\"type\":\"match\"") {
                matches += 1;
                if matches >= limit {
                    break;
                }
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    matches
}

/// pi's fd call: `fd --glob --color=never --hidden --no-require-git --max-results L [--full-path] -- pattern
/// root`, reading every line. Returns the number of lines.
fn run_fd(fd: &Path, no_require_git: bool, pattern: &str, limit: usize) -> usize {
    let root = &TREE.root;
    let mut command = Command::new(fd);
    command.args(["--glob", "--color=never", "--hidden"]);
    if no_require_git {
        command.arg("--no-require-git");
    }
    command.args(["--max-results", &limit.to_string()]);
    let pattern = if pattern.contains('/') {
        command.arg("--full-path");
        format!("**/{pattern}")
    } else {
        pattern.to_owned()
    };
    let output = command.arg("--").arg(pattern).arg(root).current_dir(root).output().expect("run fd");
    output.stdout.split(|b| *b == b'\n').filter(|line| !line.is_empty()).count()
}

fn skip(what: &str) {
    eprintln!("skipping {what}: binary not found (set PI_BENCH_RG / PI_BENCH_FD)");
}

/// A literal that occurs in about 85 files: every visible file is searched.
#[divan::bench_group(sample_count = 10, sample_size = 1)]
mod grep_rare_literal {
    use super::*;

    #[divan::bench]
    fn ours(bencher: Bencher) {
        bencher.bench(|| run_tool("grep", json!({"pattern": RARE_WORD, "literal": true})));
    }

    #[divan::bench]
    fn rg(bencher: Bencher) {
        match &*RG {
            Some(rg) => bencher.bench(|| run_rg(rg, &["--fixed-strings"], RARE_WORD, 100)),
            None => skip("rg"),
        }
    }
}

/// A case-insensitive regex that matches nowhere: the whole tree is scanned by the regex engine.
#[divan::bench_group(sample_count = 10, sample_size = 1)]
mod grep_regex_no_match {
    use super::*;

    const PATTERN: &str = r"fn\s+\w+_handler\(";

    #[divan::bench]
    fn ours(bencher: Bencher) {
        bencher.bench(|| run_tool("grep", json!({"pattern": PATTERN, "ignoreCase": true})));
    }

    #[divan::bench]
    fn rg(bencher: Bencher) {
        match &*RG {
            Some(rg) => bencher.bench(|| run_rg(rg, &["--ignore-case"], PATTERN, 100)),
            None => skip("rg"),
        }
    }
}

/// A common word with pi's default limit of 100: the search stops early.
#[divan::bench_group(sample_count = 20, sample_size = 1)]
mod grep_common_limit_100 {
    use super::*;

    #[divan::bench]
    fn ours(bencher: Bencher) {
        bencher.bench(|| run_tool("grep", json!({"pattern": "handler", "glob": "*.rs"})));
    }

    #[divan::bench]
    fn rg(bencher: Bencher) {
        match &*RG {
            Some(rg) => bencher.bench(|| run_rg(rg, &["--glob", "*.rs"], "handler", 100)),
            None => skip("rg"),
        }
    }
}

/// A name glob with few results (every file name is tested, nothing stops the walk).
#[divan::bench_group(sample_count = 10, sample_size = 1)]
mod find_rare_name {
    use super::*;

    #[divan::bench]
    fn ours(bencher: Bencher) {
        bencher.bench(|| run_tool("find", json!({"pattern": "Cargo.toml"})));
    }

    #[divan::bench]
    fn fd(bencher: Bencher) {
        match &*FD {
            Some((fd, flag)) => bencher.bench(|| run_fd(fd, *flag, "Cargo.toml", 1000)),
            None => skip("fd"),
        }
    }
}

/// A path glob (matched against full paths) with a few thousand hits, cut at pi's limit of 1000.
#[divan::bench_group(sample_count = 10, sample_size = 1)]
mod find_path_glob_limit_1000 {
    use super::*;

    #[divan::bench]
    fn ours(bencher: Bencher) {
        bencher.bench(|| run_tool("find", json!({"pattern": "src/**/*.spec.ts"})));
    }

    #[divan::bench]
    fn fd(bencher: Bencher) {
        match &*FD {
            Some((fd, flag)) => bencher.bench(|| run_fd(fd, *flag, "src/**/*.spec.ts", 1000)),
            None => skip("fd"),
        }
    }
}

/// Every entry (directories included) with a limit above the tree size: the full listing is built.
#[divan::bench_group(sample_count = 10, sample_size = 1)]
mod find_everything {
    use super::*;

    #[divan::bench]
    fn ours(bencher: Bencher) {
        bencher.bench(|| run_tool("find", json!({"pattern": "*", "limit": 200_000})));
    }

    #[divan::bench]
    fn fd(bencher: Bencher) {
        match &*FD {
            Some((fd, flag)) => bencher.bench(|| run_fd(fd, *flag, "*", 200_000)),
            None => skip("fd"),
        }
    }
}
