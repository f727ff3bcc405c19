//! The crate's error: core's error kinds (parameters, files, formats) plus
//! the faults only a de-duplicator meets.

use std::fmt;

/// What went wrong, as a category a caller can match on.
///
/// # Examples
///
/// ```
/// use filterlab_dedup::{Deduplicator, ErrorKind};
///
/// let err = Deduplicator::with_fpp(1.5).expected_items(1000).build().unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Filter(filterlab_core::ErrorKind::InvalidParameter));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An error of `filterlab-core` or `filterlab-bloom`: a parameter out of
    /// its domain, a size over the memory cap, a checkpoint that is damaged
    /// (bad magic, other version, truncated, checksum mismatch, ...) or made
    /// for another configuration (`ConfigMismatch`), an I/O failure.
    Filter(filterlab_core::ErrorKind),
    /// The checkpoint file does not exist.
    CheckpointMissing,
    /// A caller-supplied hash is not hexadecimal (a fault).
    MalformedHash,
    /// A caller-supplied hash has fewer bits than the sizing needs (a fault).
    HashTooShort,
    /// A check named a partition on a de-duplicator without partitions, or
    /// none on one with partitions.
    PartitionMismatch,
}

impl ErrorKind {
    /// Whether this is a fault of one input (a bad hash), which a permissive
    /// caller logs and skips, rather than an error of the whole run.
    pub fn is_fault(self) -> bool {
        matches!(self, Self::MalformedHash | Self::HashTooShort)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Filter(kind) => write!(f, "{kind}"),
            Self::CheckpointMissing => f.write_str("checkpoint missing"),
            Self::MalformedHash => f.write_str("malformed hash"),
            Self::HashTooShort => f.write_str("hash too short"),
            Self::PartitionMismatch => f.write_str("partition mismatch"),
        }
    }
}

/// A filterlab-dedup error: a matchable [`ErrorKind`] and a detail for humans.
#[derive(Debug)]
pub struct Error {
    /// What went wrong.
    kind: ErrorKind,
    /// The core error this one came from, if any.
    cause: Option<filterlab_core::Error>,
    /// The explanation, for humans.
    detail: String,
}

impl Error {
    /// An error of `kind` explained by `detail`.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        Self {
            kind,
            cause: None,
            detail,
        }
    }

    /// The category of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The explanation, without the kind.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The same error with `context` (a file name, a flag) put before its detail.
    #[must_use]
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.detail = if self.detail.is_empty() {
            context.to_string()
        } else {
            format!("{context}: {}", self.detail)
        };
        self
    }
}

impl fmt::Display for Error {
    /// `kind: detail`, or the kind alone.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)?;
        match self.detail.as_str() {
            "" => Ok(()),
            detail => write!(f, ": {detail}"),
        }
    }
}

impl std::error::Error for Error {
    /// The core error this one wraps, if any.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.cause.as_ref()?)
    }
}

impl From<filterlab_core::Error> for Error {
    fn from(err: filterlab_core::Error) -> Self {
        Self {
            kind: ErrorKind::Filter(err.kind()),
            detail: err.detail().to_owned(),
            cause: Some(err),
        }
    }
}

impl From<std::io::Error> for Error {
    /// A missing file becomes [`ErrorKind::CheckpointMissing`] only where a
    /// checkpoint is read (see [`Deduplicator::read_checkpoint`]); here every
    /// I/O error is core's `Io` (or `Truncated` at an unexpected end).
    ///
    /// [`Deduplicator::read_checkpoint`]: crate::Deduplicator::read_checkpoint
    fn from(err: std::io::Error) -> Self {
        filterlab_core::Error::from(err).into()
    }
}

/// Shorthand for an invalid-parameter error.
pub(crate) fn invalid(detail: impl Into<String>) -> Error {
    filterlab_core::Error::invalid(detail).into()
}
