//! A handle's connection: to one server or through the cluster client,
//! opened on first use, dropped when it breaks, and opened again by the
//! next call, so a handle outlives a server restart and a failover.

use std::time::Duration;

use redis::cluster::ClusterConnection;
use redis::{Connection, ConnectionLike, RedisError, RedisResult, Value};

use crate::endpoint::{DEFAULT_TIMEOUT, Endpoint};
use crate::error::Error;
use crate::scripts::Call;

/// An endpoint and the current connection to it, if any.
pub(crate) struct Link {
    endpoint: Endpoint,
    connection: Option<Conn>,
    timeout: Option<Duration>,
}

/// A connection to one server, or the cluster client's set of them.
enum Conn {
    Node(Connection),
    Cluster(Box<ClusterConnection>),
}

impl Conn {
    fn as_dyn(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Self::Node(con) => con,
            Self::Cluster(con) => &mut **con,
        }
    }
}

impl Link {
    /// A link that connects on first use.
    pub(crate) fn new(endpoint: &(impl Into<Endpoint> + Clone)) -> Self {
        Self {
            endpoint: endpoint.clone().into(),
            connection: None,
            timeout: Some(DEFAULT_TIMEOUT),
        }
    }

    /// Sets the timeout of connecting and of each read and write (`None`:
    /// wait forever); takes effect from the next connection.
    pub(crate) fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
        self.connection = None;
    }

    /// The timeout.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The endpoint.
    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Runs `step` on the connection, connecting first if needed. Unless
    /// the server answered with an error reply, the connection is dropped
    /// on error: its state is unknown, and the next call starts afresh (on
    /// a cluster, from a fresh slot map).
    pub(crate) fn run<T>(
        &mut self,
        step: impl FnOnce(&mut dyn ConnectionLike) -> RedisResult<T>,
    ) -> Result<T, Error> {
        let connection = self.connection()?;
        let result = step(connection.as_dyn());
        result.map_err(|err| self.failed(err))
    }

    /// Runs every call and returns their replies in order, or the first
    /// error (in call order) once every call was tried: on one server in
    /// one pipeline (one round trip), on a cluster one call after another
    /// through the cluster client, which follows redirections for each.
    /// A call the server lacked the script of (NOSCRIPT) is run again
    /// after loading it; it had not run.
    pub(crate) fn run_calls(&mut self, calls: &[Call]) -> Result<Vec<Value>, Error> {
        if calls.len() == 1 {
            return Ok(vec![self.run(|con| calls[0].invoke(con))?]);
        }
        let replies = match self.connection()? {
            Conn::Cluster(con) => {
                let mut replies = Vec::with_capacity(calls.len());
                let mut failure = None;
                for call in calls {
                    match call.invoke(&mut **con) {
                        Ok(value) => replies.push(value),
                        Err(err) => {
                            failure = Some(err);
                            break;
                        }
                    }
                }
                return match failure {
                    Some(err) => Err(self.failed(err)),
                    None => Ok(replies),
                };
            }
            Conn::Node(con) => {
                let mut pipe = redis::pipe();
                for call in calls {
                    pipe.add_command(call.cmd().clone());
                }
                pipe.ignore_errors().query::<Vec<RedisResult<Value>>>(con)
            }
        };
        let replies = replies.map_err(|err| self.failed(err))?;
        let mut values = Vec::with_capacity(calls.len());
        let mut first_error = None;
        for (call, result) in calls.iter().zip(replies) {
            let result = match result {
                Err(err)
                    if err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    self.run(|con| call.invoke(con))
                }
                Err(err) => Err(Error::from(err)),
                Ok(value) => Ok(value),
            };
            match result {
                Ok(value) => values.push(value),
                Err(err) => {
                    first_error.get_or_insert(err);
                    values.push(Value::Nil);
                }
            }
        }
        match first_error {
            Some(err) => Err(err),
            None => Ok(values),
        }
    }

    fn connection(&mut self) -> Result<&mut Conn, Error> {
        if self.connection.is_none() {
            self.connection = Some(connect(&self.endpoint, self.timeout)?);
        }
        Ok(self.connection.as_mut().expect("just connected"))
    }

    /// Drops the connection unless `err` is an error reply, and classifies it.
    fn failed(&mut self, err: RedisError) -> Error {
        if !is_reply(&err) {
            self.connection = None;
        }
        Error::from(err)
    }
}

impl Clone for Link {
    /// The same endpoint and timeout, with a connection of its own (opened on first use).
    fn clone(&self) -> Self {
        Self {
            endpoint: self.endpoint.clone(),
            connection: None,
            timeout: self.timeout,
        }
    }
}

fn connect(endpoint: &Endpoint, timeout: Option<Duration>) -> RedisResult<Conn> {
    match endpoint {
        Endpoint::Node(client) => {
            let connection = match timeout {
                Some(timeout) => client.get_connection_with_timeout(timeout)?,
                None => client.get_connection()?,
            };
            connection.set_read_timeout(timeout)?;
            connection.set_write_timeout(timeout)?;
            Ok(Conn::Node(connection))
        }
        Endpoint::Cluster(client) => {
            let connection = client.get_connection()?;
            connection.set_read_timeout(timeout)?;
            connection.set_write_timeout(timeout)?;
            Ok(Conn::Cluster(Box::new(connection)))
        }
    }
}

/// Whether the server answered with an error reply (the connection is then
/// still in step with it). Cluster errors (CLUSTERDOWN, TRYAGAIN, a slot
/// not served) are not: the next call starts from a fresh slot map.
fn is_reply(err: &RedisError) -> bool {
    matches!(
        err.kind(),
        redis::ErrorKind::Server(_)
            | redis::ErrorKind::Extension
            | redis::ErrorKind::UnexpectedReturnType
    ) && !err.is_io_error()
        && !err.is_cluster_error()
}
