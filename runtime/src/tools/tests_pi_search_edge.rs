//! A second set of results recorded from pi 0.73.1 (rg 15.2.0, fd 10.5.0) on an awkward tree: a `.git`
//! directory inside the search root, a BOM, Latin-1 bytes, NUL bytes, a file without a final newline, an
//! anchored `.gitignore` rule, symlinks, and names that exercise pi's `localeCompare` sort.

use std::path::PathBuf;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::tests_pi_search::run;

struct EdgeFixture {
    _dir: TempDir,
    project: PathBuf,
}

fn edge_fixture() -> EdgeFixture {
    let dir = TempDir::new().unwrap();
    let project = dir.path().join("proj");
    let files: [(&str, &[u8]); 28] = [
        (".git/config", b"[core]\n\thello = git\n"),
        (".git/HEAD", b"ref: refs/heads/main\n"),
        (".gitignore", b"*.log\n/out/\n"),
        ("bom.txt", b"\xef\xbb\xbfhello bom\nsecond\n"),
        ("latin1.txt", b"caf\xe9 hello\nplain hello\n"),
        ("blob.bin", b"hello\x00binary\nhello again\n"),
        ("src/app.log", b"hello log\n"),
        ("src/keep.rs", b"// hello keep\nfn x() {}\n"),
        ("src/sub/inner.md", b"hello md\n"),
        ("src/sub/.secret", b"hello secret\n"),
        ("out/gen.txt", b"hello gen\n"),
        ("nested/out/gen.txt", b"hello nested out\n"),
        ("edge.txt", b"hello first\nmid\nhello last"),
        ("Names/\u{c4}rger.txt", b"x\n"),
        ("Names/zebra.txt", b"x\n"),
        ("Names/apple.txt", b"x\n"),
        ("Names/\u{e9}clair.txt", b"x\n"),
        ("Names/Eagle.txt", b"x\n"),
        ("Names/#hash", b"x\n"),
        ("Names/~tilde", b"x\n"),
        ("Names/$dollar", b"x\n"),
        ("Names/@at", b"x\n"),
        ("Names/(paren)", b"x\n"),
        ("Names/Zulu", b"x\n"),
        ("tests/a.test.ts", b"x\n"),
        ("tests/b.TEST.ts", b"x\n"),
        ("tests/c.spec.js", b"x\n"),
        ("Upper.TS", b"x\n"),
    ];
    for (relative, bytes) in files {
        let path = project.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    std::os::unix::fs::symlink("src/sub", project.join("linkdir")).unwrap();
    std::os::unix::fs::symlink("nowhere", project.join("broken")).unwrap();
    EdgeFixture { _dir: dir, project }
}

/// How a recorded result is compared.
#[derive(Clone, Copy)]
enum Compare {
    Exact,
    /// rg printed files in completion order; we print them sorted.
    SameRows,
}

async fn check(fx: &EdgeFixture, cases: &[(&str, Value, &str, Compare)]) {
    for (tool, args, pi, compare) in cases {
        let ours = run(&fx.project, tool, args.clone()).await.unwrap();
        match compare {
            Compare::Exact => assert_eq!(&ours, pi, "{tool} {args}"),
            Compare::SameRows => {
                let (mut a, mut b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), pi.lines().collect());
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "{tool} {args}");
            }
        }
    }
}

#[tokio::test]
async fn grep_edge_cases_match_pi() {
    use Compare::{Exact, SameRows};
    let fx = edge_fixture();
    let cases = [
        (
            "grep",
            json!({"pattern": "hello"}),
            "latin1.txt:1: caf\u{FFFD} hello\nlatin1.txt:2: plain hello\nedge.txt:1: hello first\nedge.txt:3: hello last\n\
             bom.txt:1: hello bom\n.git/config:2: \thello = git\nnested/out/gen.txt:1: hello nested out\n\
             src/sub/inner.md:1: hello md\nsrc/sub/.secret:1: hello secret\nsrc/keep.rs:1: // hello keep",
            SameRows,
        ),
        // rg drops the BOM; pi's context lines come from the raw file and keep it.
        ("grep", json!({"pattern": "hello", "path": "bom.txt"}), "bom.txt:1: hello bom", Exact),
        (
            "grep",
            json!({"pattern": "hello", "path": "bom.txt", "context": 1}),
            "bom.txt:1: \u{FEFF}hello bom\nbom.txt-2- second",
            Exact,
        ),
        (
            "grep",
            json!({"pattern": "hello", "path": "latin1.txt"}),
            "latin1.txt:1: caf\u{FFFD} hello\nlatin1.txt:2: plain hello",
            Exact,
        ),
        (
            "grep",
            json!({"pattern": "hello", "path": "blob.bin"}),
            "blob.bin:1: hello\0binary\nblob.bin:2: hello again",
            Exact,
        ),
        (
            "grep",
            json!({"pattern": "hello", "glob": "!*.txt"}),
            ".git/config:2: \thello = git\nsrc/sub/inner.md:1: hello md\nsrc/sub/.secret:1: hello secret\nsrc/keep.rs:1: // hello keep",
            SameRows,
        ),
        // A whitelist glob lets a .gitignore'd file through, as rg's --glob does.
        (
            "grep",
            json!({"pattern": "hello", "glob": "src/**"}),
            "src/app.log:1: hello log\nsrc/sub/inner.md:1: hello md\nsrc/sub/.secret:1: hello secret\nsrc/keep.rs:1: // hello keep",
            SameRows,
        ),
        (
            "grep",
            json!({"pattern": "hello", "path": "src"}),
            "sub/inner.md:1: hello md\nsub/.secret:1: hello secret\nkeep.rs:1: // hello keep",
            SameRows,
        ),
        (
            "grep",
            json!({"pattern": "hello", "path": "edge.txt", "context": 3}),
            "edge.txt:1: hello first\nedge.txt-2- mid\nedge.txt-3- hello last\nedge.txt-1- hello first\nedge.txt-2- mid\n\
             edge.txt:3: hello last",
            Exact,
        ),
        (
            "grep",
            json!({"pattern": "hello", "path": "edge.txt", "limit": 0}),
            "edge.txt:1: hello first\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]",
            Exact,
        ),
        (
            "grep",
            json!({"pattern": "hello", "path": "edge.txt", "limit": 1.5}),
            "edge.txt:1: hello first\nedge.txt:3: hello last\n\n[1.5 matches limit reached. Use limit=3 for more, or refine pattern]",
            Exact,
        ),
        (
            "grep",
            json!({"pattern": "hello", "path": "linkdir"}),
            "inner.md:1: hello md\n.secret:1: hello secret",
            SameRows,
        ),
        ("grep", json!({"pattern": "HELLO"}), "No matches found", Exact),
        // The anchored rule /out/ only applies next to the .gitignore.
        ("grep", json!({"pattern": "hello", "path": "nested"}), "out/gen.txt:1: hello nested out", Exact),
        (
            "grep",
            json!({"pattern": "hello", "glob": "*.{md,rs}"}),
            "src/sub/inner.md:1: hello md\nsrc/keep.rs:1: // hello keep",
            SameRows,
        ),
        (
            "grep",
            json!({"pattern": "^hello \\w+$", "path": "edge.txt"}),
            "edge.txt:1: hello first\nedge.txt:3: hello last",
            Exact,
        ),
    ];
    check(&fx, &cases).await;
}

#[tokio::test]
async fn find_edge_cases_match_pi() {
    use Compare::Exact;
    let fx = edge_fixture();
    let everything = ".git/\n.git/HEAD\n.git/config\n.gitignore\nNames/\nNames/#hash\nNames/$dollar\nNames/(paren)\n\
                      Names/@at\nNames/Eagle.txt\nNames/Zulu\nNames/apple.txt\nNames/zebra.txt\nNames/~tilde\n\
                      Names/\u{c4}rger.txt\nNames/\u{e9}clair.txt\nUpper.TS\nblob.bin\nbom.txt\nbroken\nedge.txt\n\
                      latin1.txt\nlinkdir\nnested/\nnested/out/\nnested/out/gen.txt\nsrc/\nsrc/keep.rs\nsrc/sub/\n\
                      src/sub/.secret\nsrc/sub/inner.md\ntests/\ntests/a.test.ts\ntests/b.TEST.ts\ntests/c.spec.js";
    let cases = [
        ("find", json!({"pattern": "*"}), everything, Exact),
        ("find", json!({"pattern": "**"}), everything, Exact),
        ("find", json!({"pattern": ".*"}), ".git/\n.gitignore\nsrc/sub/.secret", Exact),
        ("find", json!({"pattern": "*.ts"}), "Upper.TS\ntests/a.test.ts\ntests/b.TEST.ts", Exact),
        ("find", json!({"pattern": "*.TS"}), "Upper.TS", Exact),
        ("find", json!({"pattern": "*.{md,rs}"}), "src/keep.rs\nsrc/sub/inner.md", Exact),
        ("find", json!({"pattern": "tests/*"}), "tests/a.test.ts\ntests/b.TEST.ts\ntests/c.spec.js", Exact),
        (
            "find",
            json!({"pattern": "*.txt", "limit": 0}),
            "Names/Eagle.txt\nNames/apple.txt\nNames/zebra.txt\nNames/\u{c4}rger.txt\nNames/\u{e9}clair.txt\nbom.txt\n\
             edge.txt\nlatin1.txt\nnested/out/gen.txt\n\n[0 results limit reached. Use limit=0 for more, or refine pattern]",
            Exact,
        ),
        ("find", json!({"pattern": "gen.txt"}), "nested/out/gen.txt", Exact),
        ("find", json!({"pattern": "*", "path": "linkdir"}), ".secret\ninner.md", Exact),
        ("find", json!({"pattern": "[A-Z]*"}), ".git/HEAD\nNames/\nNames/Eagle.txt\nNames/Zulu\nUpper.TS", Exact),
        ("find", json!({"pattern": "[a-z]*.txt", "path": "Names"}), "Eagle.txt\napple.txt\nzebra.txt", Exact),
        ("find", json!({"pattern": "*.test.ts"}), "tests/a.test.ts\ntests/b.TEST.ts", Exact),
        ("find", json!({"pattern": "out"}), "nested/out/", Exact),
    ];
    check(&fx, &cases).await;
}

#[tokio::test]
async fn ls_edge_cases_match_pi() {
    use Compare::Exact;
    let fx = edge_fixture();
    let cases = [
        (
            "ls",
            json!({"path": "Names"}),
            "(paren)\n@at\n#hash\n~tilde\n$dollar\napple.txt\n\u{c4}rger.txt\nEagle.txt\n\u{e9}clair.txt\nzebra.txt\nZulu",
            Exact,
        ),
        (
            "ls",
            json!({}),
            ".git/\n.gitignore\nblob.bin\nbom.txt\nedge.txt\nlatin1.txt\nlinkdir/\nNames/\nnested/\nout/\nsrc/\ntests/\nUpper.TS",
            Exact,
        ),
        ("ls", json!({"path": "Names", "limit": 0}), "(empty directory)", Exact),
        (
            "ls",
            json!({"path": "Names", "limit": 2.5}),
            "(paren)\n@at\n#hash\n\n[2.5 entries limit reached. Use limit=5 for more]",
            Exact,
        ),
        ("ls", json!({"path": "linkdir"}), ".secret\ninner.md", Exact),
    ];
    check(&fx, &cases).await;
}
