//! What the private server and the cluster's nodes share: starting a
//! `redis-server` process, reading its command counts, and names no one
//! else uses.

use std::io;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Starts `redis-server` on 127.0.0.1:`port` with its files in `dir`,
/// no snapshots, and `args`.
pub(super) fn spawn_with(dir: &Path, port: u16, args: &[&str]) -> io::Result<Child> {
    Command::new("redis-server")
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
