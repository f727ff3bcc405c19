//! A real `redis-server` for tests, examples and the harness (feature
//! `testing`): started from the PATH on a free loopback port in a temporary
//! directory, killed when dropped, or the server `FILTERLAB_REDIS_URL`
//! names.
//!
//! On a machine with neither, [`Server::start`] lets a test skip: it says
//! so on stderr, once per process, and the test returns early. With
//! `FILTERLAB_REQUIRE_REDIS=1` (set by CI, which installs the server) a
//! missing server fails the test instead.
//!
//! ```no_run
//! // no_run: needs redis-server on the PATH (or FILTERLAB_REDIS_URL).
//! use filterlab_redis::RedisBloomFilter;
//! use filterlab_redis::testing::{Server, unique};
//!
//! let server = Server::discover()?;
//! let (mut filter, _) = RedisBloomFilter::try_init(&server.client(), &unique("demo"), 1000, 0.01)?;
//! assert!(filter.insert("a")?);
//! filter.delete()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::thread::sleep;
use std::time::{Duration, Instant};

pub use crate::reference::BitfieldReference;

mod cluster;
mod process;
pub use cluster::{Cluster, ClusterNode};
pub use process::{REQUIRE_VARIABLE, skip, unique};
use process::{calls_in, spawn_wrapped};

/// The variable naming a server to use instead of a private one.
pub const URL_VARIABLE: &str = "FILTERLAB_REDIS_URL";

/// A server to talk to: private (a child process of this one) or the user's.
pub struct Server {
    url: String,
    private: Option<Private>,
}

/// A redis-server child process and where it keeps its files.
struct Private {
    child: Child,
    port: u16,
    dir: PathBuf,
    /// Its arguments after the port, directory and logging ones.
    args: Vec<String>,
    /// The program that runs it, if any (valgrind).
    wrapper: Vec<String>,
}

impl Server {
    /// The server `FILTERLAB_REDIS_URL` names (not checked: the first call
    /// on it fails if it is not there), else a private one without
    /// persistence (`--save "" --appendonly no`).
    ///
    /// # Errors
    ///
    /// When `redis-server` cannot be run (not on the PATH) or does not
    /// start answering within 20 s on any of 20 free ports.
    pub fn discover() -> io::Result<Self> {
        match user_url() {
            Some(url) => Ok(Self { url, private: None }),
            None => Self::private(false),
        }
    }

    /// [`discover`](Self::discover), for tests: `None` when `redis-server`
    /// is not on the PATH and `FILTERLAB_REDIS_URL` is unset (see
    /// [`skip`]), so that a test can skip with
    /// `let Some(server) = Server::start() else { return };`.
    ///
    /// # Panics
    ///
    /// When there is no server and `FILTERLAB_REQUIRE_REDIS` is `1`, or
    /// when `redis-server` is there but does not start.
    pub fn start() -> Option<Self> {
        match Self::discover() {
            Err(err) if err.kind() == io::ErrorKind::NotFound => skip(&err),
            started => Some(started.unwrap_or_else(|err| panic!("no Redis server: {err}"))),
        }
    }

    /// A private server, `persistent` or not; `None` when
    /// `FILTERLAB_REDIS_URL` is set (a test then must not kill the user's
    /// server nor count commands on it), and as [`start`](Self::start)
    /// when `redis-server` is not on the PATH. A persistent one keeps every
    /// acknowledged write across a kill and restart (append-only file,
    /// fsync before each reply).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_private(persistent: bool) -> Option<Self> {
        match user_url() {
            Some(_) => None,
            None => Self::start_private_with(persistent, &[]),
        }
    }

    /// A private server, `persistent` or not, started with `args` after
    /// its own (for example `["--loadmodule", path]`), whether or not
    /// `FILTERLAB_REDIS_URL` is set; as [`start`](Self::start) when
    /// `redis-server` is not on the PATH.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_private_with(persistent: bool, args: &[&str]) -> Option<Self> {
        match Self::private_with(persistent, args) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => skip(&err),
            started => Some(started.unwrap_or_else(|err| panic!("no Redis server: {err}"))),
        }
    }

    fn private(persistent: bool) -> io::Result<Self> {
        Self::private_with(persistent, &[])
    }

    /// [`start_private_with`](Self::start_private_with), with the error.
    ///
    /// # Errors
    ///
    /// As [`discover`](Self::discover).
    pub fn private_with(persistent: bool, args: &[&str]) -> io::Result<Self> {
        Self::private_wrapped(&[], persistent, args)
    }

    /// [`private_with`](Self::private_with), `redis-server` run by the
    /// program and arguments of `wrapper` (for example `["valgrind",
    /// "--tool=callgrind", …]`, to count the server's instructions; see
    /// [`pid`](Self::pid)). Such a server may take a minute to answer.
    ///
    /// # Errors
    ///
    /// As [`discover`](Self::discover).
    pub fn private_wrapped(wrapper: &[&str], persistent: bool, args: &[&str]) -> io::Result<Self> {
        let dir = std::env::temp_dir().join(unique("filterlab-redis-server"));
        std::fs::create_dir_all(&dir)?;
        let persistence: &[&str] = if persistent {
            &["--appendonly", "yes", "--appendfsync", "always"]
        } else {
            &["--appendonly", "no"]
        };
        let args: Vec<String> = persistence
            .iter()
            .chain(args)
            .map(|&arg| arg.to_owned())
            .collect();
        let wrapper: Vec<String> = wrapper.iter().map(|&arg| arg.to_owned()).collect();
        match Self::private_in(&dir, &wrapper, &args) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(err)
            }
            Err(err) => Err(io::Error::new(
                err.kind(),
                format!("{err}; see its logs in {}", dir.display()),
            )),
            started => started,
        }
    }

    fn private_in(dir: &Path, wrapper: &[String], args: &[String]) -> io::Result<Self> {
        for _attempt in 0..20 {
            // Another process may take the port between this probe and
            // redis-server's bind: then redis-server exits and we try another.
            let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
            let mut private = Private {
                child: spawn(wrapper, dir, port, args)?,
                port,
                dir: dir.to_owned(),
                args: args.to_vec(),
                wrapper: wrapper.to_vec(),
            };
            if private.wait_ready() {
                return Ok(Self {
                    url: format!("redis://127.0.0.1:{port}/"),
                    private: Some(private),
                });
            }
            private.stop();
        }
        Err(io::Error::other(
            "redis-server did not start on any of 20 ports",
        ))
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The process id of a private server (of its wrapper, which is the
    /// same process for valgrind).
    pub fn pid(&self) -> Option<u32> {
        self.private.as_ref().map(|private| private.child.id())
    }

    /// The port of a private server.
    pub fn port(&self) -> Option<u16> {
        self.private.as_ref().map(|private| private.port)
    }

    /// The log file of a private server.
    pub fn log_file(&self) -> Option<PathBuf> {
        self.private
            .as_ref()
            .map(|private| private.dir.join("redis.log"))
    }

    /// Whether this process started the server (and so is its only client).
    pub fn is_private(&self) -> bool {
        self.private.is_some()
    }

    /// A client of the server.
    ///
    /// # Panics
    ///
    /// When `FILTERLAB_REDIS_URL` is not a Redis URL.
    pub fn client(&self) -> redis::Client {
        redis::Client::open(self.url.as_str()).expect("a valid Redis URL")
    }

    /// A plain connection, for inspecting and tampering with keys.
    ///
    /// # Panics
    ///
    /// When the server does not answer.
    pub fn connection(&self) -> redis::Connection {
        self.client()
            .get_connection()
            .expect("a connection to the Redis server")
    }

    /// Kills a private server (SIGKILL): no shutdown, no final save. Does
    /// nothing to the user's.
    pub fn kill(&mut self) {
        if let Some(private) = &mut self.private {
            private.stop();
        }
    }

    /// Starts the private server again on the same port and directory (a
    /// persistent one reloads its data).
    ///
    /// # Panics
    ///
    /// On the user's server, or when it does not come back within 50 tries.
    pub fn restart(&mut self) {
        let private = self
            .private
            .as_mut()
            .expect("only a private server restarts");
        for _attempt in 0..50 {
            if let Ok(child) = spawn(&private.wrapper, &private.dir, private.port, &private.args) {
                private.child = child;
                if private.wait_ready() {
                    return;
                }
                private.stop();
            }
            sleep(Duration::from_millis(100));
        }
        panic!("redis-server did not restart on port {}", private.port);
    }

    /// The server's version (`redis_version` of INFO server).
    ///
    /// # Errors
    ///
    /// When the server does not answer INFO.
    pub fn version(&self) -> redis::RedisResult<String> {
        let info = self.info("server")?;
        Ok(info
            .lines()
            .find_map(|line| line.strip_prefix("redis_version:"))
            .unwrap_or("unknown")
            .trim()
            .to_owned())
    }

    /// CPU seconds the server process has used (`used_cpu_sys` plus
    /// `used_cpu_user` of INFO cpu): its cost of a step, which a busy
    /// machine disturbs less than the wall-clock time.
    ///
    /// # Errors
    ///
    /// When the server does not answer INFO.
    pub fn cpu_seconds(&self) -> redis::RedisResult<f64> {
        let info = self.info("cpu")?;
        Ok(["used_cpu_sys:", "used_cpu_user:"]
            .iter()
            .filter_map(|field| {
                info.lines()
                    .find_map(|line| line.strip_prefix(field))
                    .and_then(|value| value.trim().parse::<f64>().ok())
            })
            .sum())
    }

    /// One section of INFO.
    fn info(&self, section: &str) -> redis::RedisResult<String> {
        let mut connection = self.client().get_connection()?;
        redis::cmd("INFO").arg(section).query(&mut connection)
    }

    /// Total calls of `command` (lower case, e.g. "evalsha") the server has
    /// run, from INFO commandstats: every client's, so exact only on a
    /// private server.
    ///
    /// # Errors
    ///
    /// When the server does not answer INFO.
    pub fn command_calls(&self, command: &str) -> redis::RedisResult<u64> {
        Ok(calls_in(&self.info("commandstats")?, command))
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
    /// took more than 20 s (120 s under a wrapper).
    fn wait_ready(&mut self) -> bool {
        let url = format!("redis://127.0.0.1:{}/", self.port);
        let Ok(client) = redis::Client::open(url.as_str()) else {
            return false;
        };
        let patience = if self.wrapper.is_empty() { 20 } else { 120 };
        let deadline = Instant::now() + Duration::from_secs(patience);
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

/// `FILTERLAB_REDIS_URL`, when set and not empty.
fn user_url() -> Option<String> {
    std::env::var(URL_VARIABLE)
        .ok()
        .filter(|url| !url.is_empty())
}

/// Starts `redis-server` (under `wrapper`, if any) on 127.0.0.1:`port`
/// with its files in `dir`.
fn spawn(wrapper: &[String], dir: &Path, port: u16, args: &[String]) -> io::Result<Child> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn_wrapped(wrapper, dir, port, &args)
}
