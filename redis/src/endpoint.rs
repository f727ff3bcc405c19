//! Where filters live: one Redis server, or a Redis Cluster reached through
//! the `redis` crate's cluster client (which follows MOVED and ASK
//! redirections and refreshes its slot map).

use std::time::Duration;

use redis::Client;
use redis::cluster::ClusterClient;

use crate::error::{Error, ErrorKind};

/// How long connecting, and each read or write, may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A Redis server or a Redis Cluster: what every filter of this crate is
/// opened on.
///
/// A `&redis::Client` or a `redis::cluster::ClusterClient` converts into
/// one, so `RedisBloomFilter::open(&client, name)` reads as before;
/// [`Endpoint::open`] finds out from a URL which of the two it names.
///
/// # Examples
///
/// ```no_run
/// # // no_run: needs a Redis server.
/// use filterlab_redis::{Endpoint, RedisShardedBloomFilter};
///
/// // A node of a cluster (or a lone server): the same call.
/// let endpoint = Endpoint::open("redis://127.0.0.1:7000/")?;
/// let mut seen = RedisShardedBloomFilter::open(&endpoint, "events")?;
/// # Ok::<(), filterlab_redis::Error>(())
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum Endpoint {
    /// One server (every key of every filter on it).
    Node(Client),
    /// A Redis Cluster.
    Cluster(ClusterClient),
}

impl Endpoint {
    /// The server at `url`, or the cluster it belongs to when it runs in
    /// cluster mode (`cluster_enabled:1` in INFO cluster): then a cluster
    /// client seeded with `url` and every other node the server knows
    /// (`CLUSTER NODES`), so that it can start from any of them later.
    ///
    /// # Errors
    ///
    /// `Filter(InvalidParameter)` for a URL the `redis` crate cannot
    /// parse, [`ErrorKind::Connection`] when the server cannot be reached.
    pub fn open(url: &str) -> Result<Self, Error> {
        let client = Client::open(url).map_err(|err| {
            Error::filter(
                filterlab_core::ErrorKind::InvalidParameter,
                format!("not a Redis URL {url:?}: {err}"),
            )
        })?;
        let mut con = client.get_connection_with_timeout(DEFAULT_TIMEOUT)?;
        con.set_read_timeout(Some(DEFAULT_TIMEOUT))?;
        let info: String = redis::cmd("INFO").arg("cluster").query(&mut con)?;
        if !info.contains("cluster_enabled:1") {
            return Ok(Self::Node(client));
        }
        let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut con)?;
        let scheme = url.split("://").next().unwrap_or("redis");
        let mut seeds = vec![url.to_owned()];
        seeds.extend(nodes.lines().filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let address = fields.get(1)?.split('@').next()?;
            let flags = fields.get(2)?;
            let usable =
                !address.starts_with(':') && !flags.contains("fail") && !flags.contains("noaddr");
            usable.then(|| format!("{scheme}://{address}/"))
        }));
        Ok(Self::Cluster(cluster_client(seeds, Some(DEFAULT_TIMEOUT))?))
    }

    /// Whether this is a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster(_))
    }
}

/// A cluster client of `seeds` (the first one's credentials serve every
/// node) with `timeout` on connecting and on each response.
pub(crate) fn cluster_client(
    seeds: Vec<String>,
    timeout: Option<Duration>,
) -> Result<ClusterClient, Error> {
    let mut builder = ClusterClient::builder(seeds);
    if let Some(timeout) = timeout {
        builder = builder
            .connection_timeout(timeout)
            .response_timeout(timeout);
    }
    builder.build().map_err(|err| {
        Error::new(
            ErrorKind::Connection,
            format!("cannot build a cluster client: {err}"),
        )
    })
}

/// `From` a client and from a reference to one (cloned) for each variant.
macro_rules! from_client {
    ($($client:ty => $variant:ident),+) => {$(
        impl From<$client> for Endpoint {
            fn from(client: $client) -> Self {
                Self::$variant(client)
            }
        }

        impl From<&$client> for Endpoint {
            fn from(client: &$client) -> Self {
                Self::$variant(client.clone())
            }
        }
    )+};
}

from_client!(Client => Node, ClusterClient => Cluster);

impl From<&Endpoint> for Endpoint {
    fn from(endpoint: &Endpoint) -> Self {
        endpoint.clone()
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Node(client) => f
                .debug_tuple("Node")
                .field(&client.get_connection_info().addr())
                .finish(),
            Self::Cluster(_) => f.write_str("Cluster"),
        }
    }
}
