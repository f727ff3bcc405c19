//! A private Redis Cluster on loopback ports: `redis-server
//! --cluster-enabled yes` processes joined by `redis-cli --cluster create`,
//! with what the tests do to it (kill a master, reshard, set a memory
//! limit) and waits bounded in time for each step to settle.
//!
//! Every process is killed, and its files removed, when the `Cluster` is
//! dropped; a watchdog shell per process also kills it once this process
//! is gone, so a cluster kept in a `static` (shared by the tests of one
//! binary) or left by a killed test run stops too.

use std::fmt::Write as _;
use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::process::{calls_in, skip, spawn_with, unique};

/// How long forming the cluster, a failover or a resharding may take.
const SETTLE: Duration = Duration::from_secs(60);

/// The cluster bus listens on the data port plus this.
const BUS_OFFSET: u16 = 10_000;

/// Cluster settings of every node: a failed master is detected after 2 s
/// (DESIGN.md: a replica took over in about 4 s on this machine).
const NODE_ARGS: [&str; 8] = [
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    "2000",
    "--appendonly",
    "no",
];

/// A Redis Cluster of processes started by this one.
pub struct Cluster {
    nodes: Vec<Process>,
    dir: PathBuf,
    /// Arguments every node gets after the cluster's own.
    args: Vec<String>,
}

/// One redis-server of the cluster.
struct Process {
    port: u16,
    dir: PathBuf,
    /// None once killed.
    child: Option<Child>,
}

/// A node as `CLUSTER NODES` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterNode {
    /// The node id.
    pub id: String,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Whether it is a master (else a replica).
    pub master: bool,
    /// The id of its master, for a replica.
    pub master_id: Option<String>,
    /// Whether the cluster marked it failed (or possibly failed).
    pub failed: bool,
    /// Hash slots it serves.
    pub slots: u32,
}

impl Cluster {
    /// Starts `masters` masters with `replicas` replicas each and joins
    /// them; returns once every slot is served, every node says
    /// `cluster_state:ok` and every replica has synced.
    ///
    /// # Errors
    ///
    /// When `redis-server` or `redis-cli` cannot be run (`NotFound`), or the
    /// cluster does not form within a minute.
    pub fn start(masters: usize, replicas: usize) -> io::Result<Self> {
        Self::start_with(masters, replicas, &[])
    }

    /// [`start`](Self::start), every node started with `args` after the
    /// cluster's own (for example `["--loadmodule", path]`).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with(masters: usize, replicas: usize, args: &[&str]) -> io::Result<Self> {
        let dir = std::env::temp_dir().join(unique("filterlab-redis-cluster"));
        let mut last = None;
        for _attempt in 0..3 {
            std::fs::create_dir_all(&dir)?;
            let mut cluster = Self {
                nodes: Vec::new(),
                dir: dir.clone(),
                args: args.iter().map(|&arg| arg.to_owned()).collect(),
            };
            match cluster.form(masters, replicas) {
                Ok(()) => return Ok(cluster),
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(err),
                // A port taken between the probe and the bind: try others.
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("the cluster did not form")))
    }

    /// [`Cluster::start`] for a test: `None`, for the test to skip, when
    /// `redis-server` or `redis-cli` cannot be run (said once, as
    /// [`skip`](super::skip) does).
    ///
    /// # Panics
    ///
    /// When they cannot be run and `FILTERLAB_REQUIRE_REDIS=1`, or when the
    /// cluster does not form.
    pub fn start_or_skip(masters: usize, replicas: usize) -> Option<Self> {
        Self::start_or_skip_with(masters, replicas, &[])
    }

    /// [`start_or_skip`](Self::start_or_skip), every node started with `args`.
    ///
    /// # Panics
    ///
    /// As [`start_or_skip`](Self::start_or_skip).
    pub fn start_or_skip_with(masters: usize, replicas: usize, args: &[&str]) -> Option<Self> {
        match Self::start_with(masters, replicas, args) {
            Ok(cluster) => Some(cluster),
            Err(err) if err.kind() == io::ErrorKind::NotFound => skip(&err),
            Err(err) => panic!("a Redis Cluster of {masters} masters: {err}"),
        }
    }

    fn form(&mut self, masters: usize, replicas: usize) -> io::Result<()> {
        let count = masters * (1 + replicas);
        let args = self.node_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for port in free_ports(count)? {
            let dir = self.dir.join(port.to_string());
            std::fs::create_dir_all(&dir)?;
            let child = spawn_with(&dir, port, &args)?;
            watch(&child, port, &dir)?;
            self.nodes.push(Process {
                port,
                dir,
                child: Some(child),
            });
        }
        for node in &self.nodes {
            wait_for(&format!("node {} answers", node.port), || {
                Ok(node_query::<String>(node.port, &redis::cmd("PING")).is_ok())
            })?;
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for node in &self.nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        create
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdin(Stdio::null());
        run(&mut create, "redis-cli --cluster create")?;
        self.wait_healthy()
    }

    /// The arguments of every node: the cluster's, then the caller's.
    fn node_args(&self) -> Vec<String> {
        NODE_ARGS
            .iter()
            .map(|&arg| arg.to_owned())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// The data ports of every node, killed ones included.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|node| node.port).collect()
    }

    /// `redis://127.0.0.1:<port>/` of every node not killed.
    pub fn urls(&self) -> Vec<String> {
        self.live()
            .map(|node| format!("redis://127.0.0.1:{}/", node.port))
            .collect()
    }

    /// A cluster client seeded with every live node (2 s to connect, 10 s
    /// per response).
    ///
    /// # Panics
    ///
    /// When no node is alive.
    pub fn client(&self) -> redis::cluster::ClusterClient {
        redis::cluster::ClusterClient::builder(self.urls())
            .connection_timeout(Duration::from_secs(2))
            .response_timeout(Duration::from_secs(10))
            .build()
            .expect("a cluster client")
    }

    /// A client of the node on `port` alone.
    ///
    /// # Panics
    ///
    /// Never for a port of this cluster.
    pub fn node_client(&self, port: u16) -> redis::Client {
        redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("a node URL")
    }

    /// The nodes as a live node sees them (`CLUSTER NODES`).
    ///
    /// # Errors
    ///
    /// When no live node answers.
    pub fn topology(&self) -> io::Result<Vec<ClusterNode>> {
        let mut last = None;
        for node in self.live() {
            match node_query::<String>(node.port, redis::cmd("CLUSTER").arg("NODES")) {
                Ok(text) => return Ok(parse_nodes(&text)),
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no live node")))
    }

    /// The live masters that serve slots.
    ///
    /// # Errors
    ///
    /// As [`topology`](Self::topology).
    pub fn masters(&self) -> io::Result<Vec<ClusterNode>> {
        Ok(self
            .topology()?
            .into_iter()
            .filter(|node| node.master && !node.failed && node.slots > 0)
            .collect())
    }

    /// Kills the node on `port` with SIGKILL: no shutdown, no final save.
    pub fn kill(&mut self, port: u16) {
        if let Some(node) = self.nodes.iter_mut().find(|node| node.port == port) {
            node.stop();
        }
    }

    /// Stops the node on `port` (SIGSTOP): it neither answers nor
    /// replicates until [`resume`](Self::resume), as a replica that falls
    /// behind its master.
    ///
    /// # Errors
    ///
    /// When `kill` cannot be run.
    pub fn pause(&self, port: u16) -> io::Result<()> {
        self.signal(port, "-STOP")
    }

    /// Lets a paused node run again (SIGCONT).
    ///
    /// # Errors
    ///
    /// When `kill` cannot be run.
    pub fn resume(&self, port: u16) -> io::Result<()> {
        self.signal(port, "-CONT")
    }

    fn signal(&self, port: u16, signal: &str) -> io::Result<()> {
        let node = self
            .nodes
            .iter()
            .find(|node| node.port == port)
            .and_then(|node| node.child.as_ref())
            .ok_or_else(|| io::Error::other(format!("no live node on port {port}")))?;
        run(
            Command::new("kill").args([signal, &node.id().to_string()]),
            "kill",
        )
    }

    /// Closes the replication links of the master on `port` (CLIENT KILL
    /// TYPE replica): with its replicas paused, as in a network partition,
    /// what it writes from then on reaches only its own memory and backlog.
    ///
    /// # Errors
    ///
    /// When the master does not answer.
    pub fn cut_replication(&self, port: u16) -> io::Result<()> {
        node_query::<u64>(
            port,
            redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("replica"),
        )
        .map(drop)
    }

    /// Waits until every replica of every live master has applied all that
    /// its master had written when this was called (their replication
    /// offsets): a scenario that then cuts a replica off knows which
    /// writes it holds. `master_link_status:up` alone says the link is up,
    /// not that the replica has caught up; on a loaded machine it lagged
    /// by more than the half second a failover test left it.
    ///
    /// # Errors
    ///
    /// When a node does not answer, or that takes more than a minute.
    pub fn wait_replicated(&self) -> io::Result<()> {
        let mut targets = Vec::new();
        for master in self.masters()? {
            let offset = replication_offset(master.port)?;
            for replica in self.replicas_of(master.port)? {
                targets.push((replica.port, offset));
            }
        }
        wait_for("the replicas have caught up", || {
            for &(port, offset) in &targets {
                if replication_offset(port)? < offset {
                    return Ok(false);
                }
            }
            Ok(true)
        })
    }

    /// The replicas of the master on `port`.
    ///
    /// # Errors
    ///
    /// As [`topology`](Self::topology).
    pub fn replicas_of(&self, port: u16) -> io::Result<Vec<ClusterNode>> {
        let topology = self.topology()?;
        let id = topology
            .iter()
            .find(|node| node.port == port)
            .map(|node| node.id.clone())
            .ok_or_else(|| io::Error::other(format!("no node on port {port}")))?;
        Ok(topology
            .into_iter()
            .filter(|node| node.master_id.as_deref() == Some(&id))
            .collect())
    }

    /// Starts a killed node again with its files: it rejoins the cluster
    /// (a master that was failed over comes back as a replica).
    ///
    /// # Errors
    ///
    /// When it cannot be started.
    pub fn restart(&mut self, port: u16) -> io::Result<()> {
        let args = self.node_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let node = self
            .nodes
            .iter_mut()
            .find(|node| node.port == port)
            .ok_or_else(|| io::Error::other(format!("no node on port {port}")))?;
        if node.child.is_none() {
            let child = spawn_with(&node.dir, node.port, &args)?;
            watch(&child, node.port, &node.dir)?;
            node.child = Some(child);
        }
        Ok(())
    }

    /// Waits until the node on `port`, killed, is marked failed and the
    /// cluster serves every slot again (its replica promoted).
    ///
    /// # Errors
    ///
    /// When that takes more than a minute.
    pub fn wait_failover(&self, port: u16) -> io::Result<()> {
        wait_for("the failed master is replaced", || {
            Ok(self
                .topology()?
                .iter()
                .any(|node| node.port == port && node.failed && node.slots == 0))
        })?;
        self.wait_healthy()
    }

    /// Waits until every live node says `cluster_state:ok` with all 16,384
    /// slots served, agrees on which node serves which slot, and every live
    /// replica is in sync with its master (`master_link_status:up`).
    ///
    /// # Errors
    ///
    /// When that takes more than a minute.
    pub fn wait_healthy(&self) -> io::Result<()> {
        wait_for("the cluster is healthy", || {
            let mut maps = Vec::new();
            for node in self.live() {
                let info = node_query::<String>(node.port, redis::cmd("CLUSTER").arg("INFO"))?;
                if !info.contains("cluster_state:ok") || !info.contains("cluster_slots_ok:16384") {
                    return Ok(false);
                }
                let replication =
                    node_query::<String>(node.port, redis::cmd("INFO").arg("replication"))?;
                if replication.contains("role:slave")
                    && !replication.contains("master_link_status:up")
                {
                    return Ok(false);
                }
                let text = node_query::<String>(node.port, redis::cmd("CLUSTER").arg("NODES"))?;
                let mut masters: Vec<(u16, u32)> = parse_nodes(&text)
                    .into_iter()
                    .filter(|node| node.master && node.slots > 0)
                    .map(|node| (node.port, node.slots))
                    .collect();
                masters.sort_unstable();
                maps.push(masters);
            }
            Ok(maps.windows(2).all(|pair| pair[0] == pair[1]))
        })
    }

    /// Moves `slots` hash slots from the master on `from` to the master on
    /// `to` with `redis-cli --cluster reshard` (keys migrated with MIGRATE,
    /// clients redirected with ASK meanwhile and MOVED after).
    ///
    /// # Errors
    ///
    /// When either is not a master or redis-cli fails.
    pub fn reshard(&self, from: u16, to: u16, slots: u32) -> io::Result<()> {
        let topology = self.topology()?;
        let id = |port: u16| {
            topology
                .iter()
                .find(|node| node.port == port && node.master)
                .map(|node| node.id.clone())
                .ok_or_else(|| io::Error::other(format!("no master on port {port}")))
        };
        let mut reshard = Command::new("redis-cli");
        reshard
            .args(["--cluster", "reshard", &format!("127.0.0.1:{from}")])
            .args(["--cluster-from", &id(from)?, "--cluster-to", &id(to)?])
            .args(["--cluster-slots", &slots.to_string(), "--cluster-yes"])
            .stdin(Stdio::null());
        run(&mut reshard, "redis-cli --cluster reshard")
    }

    /// `CONFIG SET parameter value` on every live node.
    ///
    /// # Errors
    ///
    /// When a node refuses.
    pub fn config_set(&self, parameter: &str, value: &str) -> io::Result<()> {
        for node in self.live() {
            node_query::<()>(
                node.port,
                redis::cmd("CONFIG").arg("SET").arg(parameter).arg(value),
            )?;
        }
        Ok(())
    }

    /// Where the logs are: one directory per port under this one.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Total calls of `command` (lower case, e.g. "evalsha") every live
    /// node has run (INFO commandstats): this process is their only client.
    ///
    /// # Errors
    ///
    /// When a live node does not answer INFO.
    pub fn command_calls(&self, command: &str) -> io::Result<u64> {
        self.live()
            .map(|node| {
                let info: String = node_query(node.port, redis::cmd("INFO").arg("commandstats"))?;
                Ok(calls_in(&info, command))
            })
            .sum()
    }

    fn live(&self) -> impl Iterator<Item = &Process> {
        self.nodes.iter().filter(|node| node.child.is_some())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Process {
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Ports p with p and p + 10,000 (its cluster bus) free, all different.
fn free_ports(count: usize) -> io::Result<Vec<u16>> {
    let mut held = Vec::new();
    let mut ports = Vec::new();
    for _try in 0..count * 50 {
        if ports.len() == count {
            break;
        }
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        if port > u16::MAX - BUS_OFFSET {
            continue;
        }
        let Ok(bus) = TcpListener::bind(("127.0.0.1", port + BUS_OFFSET)) else {
            continue;
        };
        held.push((listener, bus));
        ports.push(port);
    }
    if ports.len() < count {
        return Err(io::Error::other(format!(
            "found {} of {count} free port pairs",
            ports.len()
        )));
    }
    Ok(ports)
}

/// Kills `child` (the redis-server on `port`) once this process is gone,
/// and removes its directory `dir` (and its parent, once empty): a shell
/// that polls both processes. It leaves as soon as the server is no longer
/// there (killed or restarted by the test), and checks before killing that
/// the process id still belongs to that server (its command line or title
/// names the port),
/// so that it never kills another process that reused the id.
fn watch(child: &Child, port: u16, dir: &Path) -> io::Result<()> {
    let script = r#"
ours() { tr '\0' ' ' < "/proc/$2/cmdline" 2>/dev/null | grep -Eq "redis-server.*[: ]$3( |$)"; }
while kill -0 "$1" 2>/dev/null; do
  ours "$@" || exit 0
  sleep 1
done
ours "$@" && kill -9 "$2"
sleep 1
rm -rf "$4"
rmdir "$(dirname "$4")" 2>/dev/null
"#;
    Command::new("sh")
        .args(["-c", script, "watchdog"])
        .arg(std::process::id().to_string())
        .arg(child.id().to_string())
        .arg(port.to_string())
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
}

/// Runs a command to completion; an error with its output unless it succeeds.
fn run(command: &mut Command, what: &str) -> io::Result<()> {
    let output = command
        .output()
        .map_err(|err| io::Error::new(err.kind(), format!("cannot run {what}: {err}")))?;
    if output.status.success() {
        return Ok(());
    }
    let mut message = format!("{what} failed ({})", output.status);
    for stream in [&output.stdout, &output.stderr] {
        let text = String::from_utf8_lossy(stream);
        let tail: Vec<&str> = text.lines().rev().take(5).collect();
        for line in tail.iter().rev() {
            let _ = write!(message, "\n  {line}");
        }
    }
    Err(io::Error::other(message))
}

/// One command on the node on `port`, with short timeouts.
fn node_query<T: redis::FromRedisValue>(port: u16, cmd: &redis::Cmd) -> io::Result<T> {
    let client =
        redis::Client::open(format!("redis://127.0.0.1:{port}/")).map_err(io::Error::other)?;
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(2))
        .map_err(io::Error::other)?;
    con.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(io::Error::other)?;
    cmd.query(&mut con).map_err(io::Error::other)
}

/// The replication offset of the node on `port`: on a master what it has
/// written to its replication stream, on a replica what it has applied.
fn replication_offset(port: u16) -> io::Result<u64> {
    let info = node_query::<String>(port, redis::cmd("INFO").arg("replication"))?;
    info.lines()
        .find_map(|line| line.strip_prefix("master_repl_offset:"))
        .and_then(|offset| offset.trim().parse().ok())
        .ok_or_else(|| io::Error::other(format!("no master_repl_offset from port {port}")))
}

/// Polls `ready` every 50 ms until it holds; errors count as not yet.
fn wait_for(what: &str, mut ready: impl FnMut() -> io::Result<bool>) -> io::Result<()> {
    let deadline = Instant::now() + SETTLE;
    let mut last = None;
    while Instant::now() < deadline {
        match ready() {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(err) => last = Some(err),
        }
        sleep(Duration::from_millis(50));
    }
    let last = last.map_or(String::new(), |err| format!(" (last error: {err})"));
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("timed out after {SETTLE:?} waiting until {what}{last}"),
    ))
}

/// Parses `CLUSTER NODES`: `<id> <ip:port@bus> <flags> <master> <ping>
/// <pong> <epoch> <link> <slot ranges...>`.
fn parse_nodes(text: &str) -> Vec<ClusterNode> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 {
                return None;
            }
            let port = fields[1]
                .split('@')
                .next()?
                .rsplit(':')
                .next()?
                .parse()
                .ok()?;
            let flags: Vec<&str> = fields[2].split(',').collect();
            let slots = fields[8..]
                .iter()
                .filter(|range| !range.starts_with('['))
                .map(|range| match range.split_once('-') {
                    Some((low, high)) => {
                        high.parse::<u32>().unwrap_or(0) + 1 - low.parse::<u32>().unwrap_or(0)
                    }
                    None => 1,
                })
                .sum();
            Some(ClusterNode {
                id: fields[0].to_owned(),
                port,
                master: flags.contains(&"master"),
                master_id: (fields[3] != "-").then(|| fields[3].to_owned()),
                failed: flags.iter().any(|flag| flag.starts_with("fail")),
                slots,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_nodes_are_parsed() {
        let text = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@40004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@40002 master - 0 1426238316232 2 connected 5461-10922
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460 16000 [93->-292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f]
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@40005 master,fail - 1426238316232 1426238316232 5 disconnected
";
        let nodes = parse_nodes(text);
        assert_eq!(nodes.len(), 4);
        assert_eq!(
            (
                nodes[0].port,
                nodes[0].master,
                nodes[0].master_id.as_deref()
            ),
            (
                30004,
                false,
                Some("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca")
            )
        );
        assert_eq!((nodes[1].slots, nodes[2].slots), (5462, 5462));
        assert!(nodes[3].failed && nodes[3].master && nodes[3].slots == 0);
    }
}
