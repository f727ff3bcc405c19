//! What the private server and the cluster's nodes share: starting a
//! `redis-server` process, reading its command counts, and names no one
//! else uses.

use std::io::{self, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Starts `redis-server` on 127.0.0.1:`port` with its files in `dir`,
/// no snapshots, and `args`.
pub(super) fn spawn_with(dir: &Path, port: u16, args: &[&str]) -> io::Result<Child> {
    spawn_wrapped(&[], dir, port, args)
}

/// [`spawn_with`], `redis-server` run by the program and arguments of
/// `wrapper` when it is not empty (valgrind, to count instructions).
pub(super) fn spawn_wrapped(
    wrapper: &[String],
    dir: &Path,
    port: u16,
    args: &[&str],
) -> io::Result<Child> {
    let mut command = match wrapper.split_first() {
        Some((program, wrapper_args)) => {
            let mut command = Command::new(program);
            command.args(wrapper_args).arg("redis-server");
            command
        }
        None => Command::new("redis-server"),
    };
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(dir)
        .args(["--save", "", "--daemonize", "no", "--logfile", "redis.log"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| io::Error::new(err.kind(), format!("cannot run redis-server: {err}")))
}

/// A name no other test, thread or process uses at the same time.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{count}-{nanos}", std::process::id())
}

/// Calls of `command` (lower case) in the text of INFO commandstats; 0 when
/// the server has not run it.
pub(super) fn calls_in(commandstats: &str, command: &str) -> u64 {
    let prefix = format!("cmdstat_{command}:calls=");
    commandstats
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .and_then(|calls| calls.parse().ok())
        .unwrap_or(0)
}

/// The variable that makes a missing server fail the tests instead of
/// skipping them, when set to `1`.
pub const REQUIRE_VARIABLE: &str = "FILTERLAB_REQUIRE_REDIS";

/// How to get `redis-server`, for messages.
const INSTALL_HINT: &str = "install it (apt-get install redis-server) or set FILTERLAB_REDIS_URL";

/// What a test does without a server: with `FILTERLAB_REQUIRE_REDIS=1`,
/// fail; otherwise return `None` for the test to skip, after saying so on
/// stderr the first time in this process (written to the stream itself,
/// past the test harness's capture, so that `cargo test` shows it).
///
/// # Panics
///
/// When `FILTERLAB_REQUIRE_REDIS` is `1`.
pub fn skip<T>(err: &io::Error) -> Option<T> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let required = std::env::var(REQUIRE_VARIABLE).is_ok_and(|value| value == "1");
    assert!(
        !required,
        "no Redis server ({REQUIRE_VARIABLE}=1): {err}; {INSTALL_HINT}"
    );
    ONCE.call_once(|| {
        let _ = writeln!(
            io::stderr(),
            "\nSKIPPED: every test of this binary that needs a Redis server passes without \
             running ({err}; FILTERLAB_REDIS_URL is unset). To run them, {INSTALL_HINT}; \
             {REQUIRE_VARIABLE}=1 makes a missing server an error.\n"
        );
    });
    None
}
