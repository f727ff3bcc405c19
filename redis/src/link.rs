//! A handle's connection: opened on first use, dropped when it breaks, and
//! opened again by the next call, so a handle outlives a server restart.

use std::time::Duration;

use redis::{Client, Connection, RedisError, RedisResult};

use crate::error::Error;

/// How long connecting, and each read or write, may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A client and its current connection, if any.
pub(crate) struct Link {
    client: Client,
    connection: Option<Connection>,
    timeout: Option<Duration>,
}

impl Link {
    /// A link that connects on first use.
    pub(crate) fn new(client: &Client) -> Self {
        Self {
            client: client.clone(),
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

    /// Runs `step` on the connection, connecting first if needed. Unless
    /// the server answered with an error reply, the connection is dropped
    /// on error: its state is unknown, and the next call starts afresh.
    pub(crate) fn run<T>(
        &mut self,
        step: impl FnOnce(&mut Connection) -> RedisResult<T>,
    ) -> Result<T, Error> {
        let connection = match &mut self.connection {
            Some(connection) => connection,
            empty => empty.insert(connect(&self.client, self.timeout)?),
        };
        step(connection).map_err(|err| {
            if !is_reply(&err) {
                self.connection = None;
            }
            Error::from(err)
        })
    }
}

impl Clone for Link {
    /// The same client and timeout, with a connection of its own (opened on first use).
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
            connection: None,
            timeout: self.timeout,
        }
    }
}

fn connect(client: &Client, timeout: Option<Duration>) -> RedisResult<Connection> {
    let connection = match timeout {
        Some(timeout) => client.get_connection_with_timeout(timeout)?,
        None => client.get_connection()?,
    };
    connection.set_read_timeout(timeout)?;
    connection.set_write_timeout(timeout)?;
    Ok(connection)
}

/// Whether the server answered with an error reply (the connection is then
/// still in step with it).
fn is_reply(err: &RedisError) -> bool {
    matches!(
        err.kind(),
        redis::ErrorKind::Server(_)
            | redis::ErrorKind::Extension
            | redis::ErrorKind::UnexpectedReturnType
    ) && !err.is_io_error()
}
