//! A real `redis-server` for the tests (and the speed example): started on a
//! free loopback port in a temporary directory, killed when dropped. With
//! `FILTERLAB_REDIS_URL` set, the tests use that server instead (and skip
//! what needs killing a server).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The variable naming a server to test against instead of a private one.
pub(crate) const URL_VARIABLE: &str = "FILTERLAB_REDIS_URL";

/// A server the tests talk to: private (a child process) or the user's.
pub(crate) struct Server {
    url: String,
    private: Option<Private>,
}

/// A redis-server child process and where it keeps its files.
struct Private {
    child: Child,
    port: u16,
    dir: PathBuf,
    persistent: bool,
}

impl Server {
    /// A private server without persistence (`--save "" --appendonly no`),
    /// or the one `FILTERLAB_REDIS_URL` names.
    pub(crate) fn start() -> Self {
        match std::env::var(URL_VARIABLE) {
            Ok(url) if !url.is_empty() => Self { url, private: None },
            _ => Self::private(false),
        }
    }

    /// A private server, `persistent` or not; `None` when the tests run
    /// against the user's server, which they must not kill nor count
    /// commands on. A persistent one keeps every acknowledged write across
    /// a kill and restart (append-only file, fsync before each reply).
    pub(crate) fn start_private(persistent: bool) -> Option<Self> {
        match std::env::var(URL_VARIABLE) {
            Ok(url) if !url.is_empty() => None,
            _ => Some(Self::private(persistent)),
        }
    }

    fn private(persistent: bool) -> Self {
        let dir = std::env::temp_dir().join(unique("filterlab-redis-server"));
        std::fs::create_dir_all(&dir).expect("a temporary directory for redis-server");
        for _attempt in 0..20 {
            // Another process may take the port between this probe and
            // redis-server's bind: then redis-server exits and we try another.
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .expect("a free loopback port")
                .port();
            let mut private = Private {
                child: spawn(&dir, port, persistent),
                port,
                dir: dir.clone(),
                persistent,
            };
            if private.wait_ready() {
                return Self {
                    url: format!("redis://127.0.0.1:{port}/"),
                    private: Some(private),
                };
            }
            private.stop();
        }
        panic!(
            "redis-server did not start; see the logs in {}",
            dir.display()
        );
    }

    /// The server's URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// A client of the server.
    pub(crate) fn client(&self) -> redis::Client {
        redis::Client::open(self.url.as_str()).expect("a valid Redis URL")
    }

    /// A plain connection, for inspecting and tampering with keys.
    pub(crate) fn connection(&self) -> redis::Connection {
        self.client()
            .get_connection()
            .expect("a connection to the test server")
    }

    /// Kills the private server (SIGKILL): no shutdown, no final save.
    pub(crate) fn kill(&mut self) {
        if let Some(private) = &mut self.private {
            private.stop();
        }
    }

    /// Starts the private server again on the same port and directory (a
    /// persistent one reloads its data).
    pub(crate) fn restart(&mut self) {
        let private = self
            .private
            .as_mut()
            .expect("only a private server restarts");
        for _attempt in 0..50 {
            private.child = spawn(&private.dir, private.port, private.persistent);
            if private.wait_ready() {
                return;
            }
            private.stop();
            sleep(Duration::from_millis(100));
        }
        panic!("redis-server did not restart on port {}", private.port);
    }

    /// Total calls of `command` (lower case, e.g. "evalsha") the server
    /// has run, from INFO commandstats.
    pub(crate) fn command_calls(&self, command: &str) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.connection())
            .expect("INFO commandstats");
        let prefix = format!("cmdstat_{command}:calls=");
        info.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |calls| calls.parse().expect("a call count"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(private) = &mut self.private {
            private.stop();
            let _ = std::fs::remove_dir_all(&private.dir);
        }
    }
}

impl Private {
    /// Waits until the server answers PING; false when it exited first or
    /// took more than 20 s.
    fn wait_ready(&mut self) -> bool {
        let url = format!("redis://127.0.0.1:{}/", self.port);
        let client = redis::Client::open(url.as_str()).expect("a valid Redis URL");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                return false;
            }
            let pong = client
                .get_connection_with_timeout(Duration::from_millis(200))
                .and_then(|mut con| redis::cmd("PING").query::<String>(&mut con));
            if pong.is_ok() {
                return true;
            }
            sleep(Duration::from_millis(10));
        }
        false
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `redis-server` on 127.0.0.1:`port` with its files in `dir`.
fn spawn(dir: &std::path::Path, port: u16, persistent: bool) -> Child {
    let mut command = Command::new("redis-server");
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(dir)
        .args(["--save", "", "--daemonize", "no", "--logfile", "redis.log"]);
    if persistent {
        command.args(["--appendonly", "yes", "--appendfsync", "always"]);
    } else {
        command.args(["--appendonly", "no"]);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run redis-server ({err}): install it (apt-get install redis-server) \
                 or set {URL_VARIABLE} to a server the tests may use"
            )
        })
}

/// A name no other test, thread or process uses at the same time.
pub(crate) fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{count}-{nanos}", std::process::id())
}
