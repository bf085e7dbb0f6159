//! A throwaway PostgreSQL server for the tests of sessions in Postgres: Debian's PostgreSQL (installed by
//! scripts/install-test-tools), a fresh cluster in a temporary folder, listening on a free loopback port,
//! with fsync off. One server per test process; each test takes a database of its own. The server dies
//! with the test process (a parent-death signal), so no run leaves one behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The server of this test process.
pub struct PostgresServer {
    port: u16,
    bin: PathBuf,
    /// The data folder (and the socket's).
    _dir: tempfile::TempDir,
    _process: Child,
}

/// The server of this test process, started on first use. Panics (failing the test) when it cannot start.
pub fn postgres() -> &'static PostgresServer {
    static SERVER: OnceLock<PostgresServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        crate::install_test_tools();
        // Started from a thread that lives as long as the process: the parent-death signal is tied to the
        // thread that spawned the server, and a test's own thread ends with the test.
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(PostgresServer::start());
            loop {
                std::thread::park();
            }
        });
        receiver.recv().expect("the thread starting Postgres answers")
    })
}

impl PostgresServer {
    fn start() -> Self {
        let bin = postgres_bin_dir();
        let dir = tempfile::tempdir().expect("a folder for the cluster");
        let data = dir.path().join("data");
        let account = ServerAccount::for_this_process(dir.path());
        let mut initdb = Command::new(bin.join("initdb"));
        initdb.args(["--auth=trust", "--encoding=UTF8", "--no-sync", "--username=postgres", "-D"]).arg(&data);
        account.apply(&mut initdb);
        let output = initdb.output().expect("initdb runs");
        assert!(output.status.success(), "initdb failed: {}", String::from_utf8_lossy(&output.stderr));
        for _ in 0..5 {
            let port = free_port();
            let mut command = Command::new(bin.join("postgres"));
            command
                .arg("-D")
                .arg(&data)
                .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
                .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300"])
                .arg("-k")
                .arg(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.path().join("server.log")).expect("the server's log"));
            account.apply(&mut command);
            die_with_parent(&mut command);
            let mut process = command.spawn().expect("postgres starts");
            if wait_until_ready(&bin, &mut process, port) {
                remove_at_exit(process.id(), dir.path());
                return Self { port, bin, _dir: dir, _process: process };
            }
            let _ = process.kill();
            let _ = process.wait();
        }
        let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default();
        panic!("postgres did not start:\n{log}");
    }

    /// A new, empty database of this server; its URL.
    pub fn new_database(&self) -> String {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("pi_test_{}_{}", std::process::id(), COUNT.fetch_add(1, Ordering::SeqCst));
        let output = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", &name])
            .output()
            .expect("createdb runs");
        assert!(output.status.success(), "createdb failed: {}", String::from_utf8_lossy(&output.stderr));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

/// Where Debian's PostgreSQL keeps its programs (`PI_GEN_POSTGRES_BIN` overrides): the newest
/// `/usr/lib/postgresql/<version>/bin`.
pub fn postgres_bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PI_GEN_POSTGRES_BIN") {
        return PathBuf::from(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).expect("PostgreSQL is installed (scripts/install-test-tools installs it)")
}

/// Postgres refuses to run as root: then the server runs as Debian's `postgres` account, which gets the
/// cluster's folder.
struct ServerAccount {
    ids: Option<(u32, u32)>,
}

impl ServerAccount {
    fn for_this_process(folder: &Path) -> Self {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Self { ids: None };
        }
        // SAFETY: the name is a valid C string; the record is read before any other getpw* call.
        let ids = unsafe {
            let record = libc::getpwnam(c"postgres".as_ptr());
            assert!(
                !record.is_null(),
                "running as root, Postgres needs the `postgres` account (Debian's package makes it)"
            );
            ((*record).pw_uid, (*record).pw_gid)
        };
        std::os::unix::fs::chown(folder, Some(ids.0), Some(ids.1)).expect("the cluster's folder given to postgres");
        Self { ids: Some(ids) }
    }

    fn apply(&self, command: &mut Command) {
        use std::os::unix::process::CommandExt as _;
        if let Some((uid, gid)) = self.ids {
            command.uid(uid).gid(gid);
        }
    }
}

/// The child gets SIGQUIT (an immediate stop) when the thread that spawned it ends (here: when the test process does).
pub(crate) fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: prctl is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// Whether the server accepts connections within a minute (false when it exited).
fn wait_until_ready(bin: &Path, process: &mut Child, port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if process.try_wait().ok().flatten().is_some() {
            return false;
        }
        let ready = Command::new(bin.join("pg_isready"))
            .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
            .status()
            .is_ok_and(|status| status.success());
        if ready {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The server and its cluster go when the test process exits (statics are never dropped): the server is
/// stopped at once and its folder removed.
fn remove_at_exit(pid: u32, folder: &Path) {
    static STARTED: std::sync::Mutex<Option<(u32, PathBuf)>> = std::sync::Mutex::new(None);
    extern "C" fn stop() {
        let started = STARTED.lock().ok().and_then(|mut started| started.take());
        if let Some((pid, folder)) = started {
            // SAFETY: signals our own child server; an exited pid is at worst answered with ESRCH.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGQUIT) };
            let _ = std::fs::remove_dir_all(folder);
        }
    }
    if let Ok(mut started) = STARTED.lock() {
        *started = Some((pid, folder.to_owned()));
    }
    // SAFETY: registers a plain function with no arguments.
    unsafe { libc::atexit(stop) };
}
