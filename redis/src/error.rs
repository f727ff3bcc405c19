//! The crate's error: core's kinds (bad parameters, sizes, the binary
//! format) plus what a shared filter on a server adds (the connection, a
//! configuration that drifted, keys of the wrong type or missing, scripts).

use std::fmt;

use redis::RedisError;

/// Error codes the crate's Lua scripts reply with (see `scripts.rs`).
pub(crate) const CODE_DRIFT: &str = "FLDRIFT";
pub(crate) const CODE_NO_FILTER: &str = "FLNOFILTER";
pub(crate) const CODE_DAMAGED: &str = "FLDAMAGED";
pub(crate) const CODE_EXISTS: &str = "FLEXISTS";
pub(crate) const CODE_INCOMPLETE: &str = "FLINCOMPLETE";

/// What went wrong, as a stable category a caller can match on.
///
/// # Examples
///
/// ```no_run
/// # // no_run: needs a Redis server.
/// use filterlab_redis::{ErrorKind, RedisBloomFilter};
///
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// let mut seen = RedisBloomFilter::open(&client, "seen")?;
/// match seen.contains("order-1") {
///     Ok(found) => println!("{found}"),
///     // Someone re-created the filter with other parameters: reopen, never guess.
///     Err(err) if err.kind() == ErrorKind::ConfigDrift => {
///         seen = RedisBloomFilter::open(&client, "seen")?;
///     }
///     // The server is down or the connection broke: no answer, retry later.
///     Err(err) if err.kind() == ErrorKind::Connection => eprintln!("retry later: {err}"),
///     Err(err) => return Err(err.into()),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// One of filterlab-core's kinds: an invalid parameter or name, a size
    /// too large, an unsupported stored version, a damaged binary format.
    Filter(filterlab_core::ErrorKind),
    /// The server could not be reached, the connection broke or timed out,
    /// the server is not ready (still loading its data), or a cluster
    /// cannot serve the keys' slot yet (CLUSTERDOWN or TRYAGAIN after the
    /// cluster client's retries, as during a failover). Nothing was
    /// answered; a write may or may not have been applied. The handle
    /// reconnects (to a cluster, with a fresh slot map) on its next call.
    Connection,
    /// No filter of that name exists (its configuration key is absent:
    /// never created, deleted, or expired).
    NotFound,
    /// The stored configuration (layout version, bits, hashes, hasher,
    /// seed, parts) is not the one this handle was opened with: the filter
    /// was re-created or edited under it. The call changed nothing; reopen
    /// the filter.
    ConfigDrift,
    /// The filter's keys are inconsistent: a bit array key is missing or of
    /// the wrong length (deleted or evicted by hand), or its configuration
    /// cannot be read. Answers from it could be false negatives, so none is given.
    Damaged,
    /// A key of the filter holds a value of another Redis type (WRONGTYPE).
    WrongType,
    /// The name (or a key of its layout) is already taken: the target of an
    /// import or a rename, or bits without a configuration.
    AlreadyExists,
    /// A sharded filter is being created or deleted, or a creation or
    /// deletion stopped half-way (its process died): it is not used until
    /// the creation ends (another `try_init` takes over an abandoned one)
    /// or the deletion is finished (delete it again).
    Incomplete,
    /// The server refused a write for lack of memory (OOM: `maxmemory`
    /// reached under the `noeviction` policy). Nothing was written; a
    /// filter too large for one node can be sharded over a cluster
    /// ([`RedisShardedBloomFilter`](crate::RedisShardedBloomFilter)).
    OutOfMemory,
    /// Durable mode: the write was applied on the master, but fewer
    /// replicas than asked for acknowledged it in time (WAIT), so a failover
    /// may still lose it. Inserting again is harmless.
    NotReplicated,
    /// A script failed on the server for a reason of its own (a Lua error),
    /// or a reply had an unexpected shape.
    Script,
    /// Any other error reply of the server (out of memory, read-only
    /// replica, missing permission, cross-slot keys in a cluster, ...).
    Server,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Self::Filter(kind) => return write!(f, "{kind}"),
            Self::Connection => "Redis connection error",
            Self::NotFound => "no such filter",
            Self::ConfigDrift => "stored configuration drifted",
            Self::Damaged => "filter keys damaged",
            Self::WrongType => "key holds the wrong kind of value",
            Self::AlreadyExists => "already exists",
            Self::Incomplete => "filter incomplete (being created or deleted)",
            Self::OutOfMemory => "Redis out of memory",
            Self::NotReplicated => "write not acknowledged by enough replicas",
            Self::Script => "script error",
            Self::Server => "Redis server error",
        };
        f.write_str(text)
    }
}

/// A filterlab-redis error: a matchable [`ErrorKind`] plus a detail for humans.
///
/// # Examples
///
/// ```
/// use filterlab_redis::{Error, ErrorKind};
///
/// // Core's errors keep their kind.
/// let err: Error = filterlab_core::Error::invalid("fpp must be in (0, 1)").into();
/// assert_eq!(err.kind(), ErrorKind::Filter(filterlab_core::ErrorKind::InvalidParameter));
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    detail: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// An error of `kind` explained by `detail`.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Self::caused_by(kind, detail.into(), None)
    }

    /// An error of `kind` explained by `detail` that `source` caused.
    fn caused_by(
        kind: ErrorKind,
        detail: String,
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        Self {
            kind,
            detail,
            source,
        }
    }

    /// The category of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable explanation, without the kind.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// Shorthand for an error of one of core's kinds.
    pub(crate) fn filter(kind: filterlab_core::ErrorKind, detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Filter(kind), detail)
    }
}

impl fmt::Display for Error {
    /// The kind, then the detail (every error of this crate has one).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let source = self.source.as_deref()?;
        Some(source)
    }
}

impl From<filterlab_core::Error> for Error {
    fn from(err: filterlab_core::Error) -> Self {
        let (kind, detail) = (ErrorKind::Filter(err.kind()), err.detail().to_owned());
        Self::caused_by(kind, detail, Some(Box::new(err)))
    }
}

impl From<RedisError> for Error {
    /// Classifies a client or server error: the scripts' own codes, WRONGTYPE,
    /// connection failures, Lua errors, and every other reply as
    /// [`ErrorKind::Server`].
    fn from(err: RedisError) -> Self {
        let kind = classify(&err);
        // Replies from scripts end with " script: <sha>, on @user_script:<line>.":
        // what the script said is enough.
        let detail = match (err.code(), err.detail()) {
            (Some(code), Some(detail)) => {
                let detail = detail.split(" script: ").next().unwrap_or(detail);
                format!("{code} {detail}")
            }
            _ => err.to_string(),
        };
        Self::caused_by(kind, detail, Some(Box::new(err)))
    }
}

/// The kind of a `RedisError`.
fn classify(err: &RedisError) -> ErrorKind {
    if err.is_io_error()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
        || err.is_timeout()
    {
        return ErrorKind::Connection;
    }
    match err.kind() {
        redis::ErrorKind::Server(
            redis::ServerErrorKind::BusyLoading
            | redis::ServerErrorKind::MasterDown
            | redis::ServerErrorKind::ReadOnly
            | redis::ServerErrorKind::TryAgain
            | redis::ServerErrorKind::ClusterDown,
        )
        | redis::ErrorKind::ClusterConnectionNotFound => ErrorKind::Connection,
        redis::ErrorKind::Server(redis::ServerErrorKind::NoScript)
        | redis::ErrorKind::Parse
        | redis::ErrorKind::UnexpectedReturnType => ErrorKind::Script,
        _ => match err.code() {
            Some(CODE_DRIFT) => ErrorKind::ConfigDrift,
            Some(CODE_NO_FILTER) => ErrorKind::NotFound,
            Some(CODE_DAMAGED) => ErrorKind::Damaged,
            Some(CODE_EXISTS) => ErrorKind::AlreadyExists,
            Some(CODE_INCOMPLETE) => ErrorKind::Incomplete,
            Some("WRONGTYPE") => ErrorKind::WrongType,
            Some("OOM") => ErrorKind::OutOfMemory,
            // Lua errors: "ERR user_script:12: attempt to ..." (Redis 7) or
            // "ERR Error running script ..." (before).
            Some("ERR")
                if err.detail().is_some_and(|detail| {
                    detail.starts_with("user_script:") || detail.contains("running script")
                }) =>
            {
                ErrorKind::Script
            }
            _ => ErrorKind::Server,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error(code: &str, detail: &str) -> Error {
        redis::make_extension_error(code.to_owned(), Some(detail.to_owned())).into()
    }

    #[test]
    fn script_codes_map_to_kinds() {
        let err = server_error(
            CODE_DRIFT,
            "num_bits is 5 in Redis script: 4f35, on @user_script:1.",
        );
        assert_eq!(err.kind(), ErrorKind::ConfigDrift);
        assert_eq!(err.detail(), "FLDRIFT num_bits is 5 in Redis");
        assert_eq!(
            server_error(CODE_NO_FILTER, "x").kind(),
            ErrorKind::NotFound
        );
        assert_eq!(server_error(CODE_DAMAGED, "x").kind(), ErrorKind::Damaged);
        assert_eq!(
            server_error(CODE_EXISTS, "x").kind(),
            ErrorKind::AlreadyExists
        );
        assert_eq!(server_error("WRONGTYPE", "x").kind(), ErrorKind::WrongType);
        assert_eq!(server_error("OOM", "x").kind(), ErrorKind::OutOfMemory);
        assert_eq!(server_error("NOPERM", "x").kind(), ErrorKind::Server);
    }

    #[test]
    fn io_errors_are_connection_errors() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let err: Error = RedisError::from(io).into();
        assert_eq!(err.kind(), ErrorKind::Connection);
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn error_is_send_sync_static() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Error>();
    }
}
