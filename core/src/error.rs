//! The one error type shared by every filterlab crate.

use std::fmt;

/// What went wrong, as a stable category a caller can match on.
///
/// The accompanying [`Error`] carries a human-readable detail; match on the
/// kind, print the error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A parameter is outside its domain: an FPP not in (0, 1) or NaN, zero
    /// items, zero bits, zero or absurdly many hash functions.
    InvalidParameter,
    /// The requested size overflows or exceeds the configured memory cap.
    TooLarge,
    /// The filter cannot take another item without breaking its guarantees;
    /// it was left exactly as it was.
    Full,
    /// Two filters cannot be merged: different sizes, hash counts, hashers or seeds.
    Incompatible,
    /// The underlying reader or writer failed.
    Io,
    /// The bytes do not start with the filterlab magic number.
    BadMagic,
    /// The format version is not one this build can read.
    UnsupportedVersion,
    /// The bytes hold a different kind of filter than the one being read.
    WrongKind,
    /// The header's parameters are impossible or contradict each other.
    InvalidHeader,
    /// The payload length does not match what the parameters imply, or bytes
    /// follow the end of the filter.
    LengthMismatch,
    /// The input ended before the filter did.
    Truncated,
    /// A checksum does not match: the bytes were corrupted.
    ChecksumMismatch,
    /// The payload is larger than the caller's limit.
    PayloadTooLarge,
    /// The stored filter is valid but configured differently from what the caller expects.
    ConfigMismatch,
    /// A filter built from a key set could not be constructed: every
    /// allowed retry with a new seed failed (see
    /// [`BuildFromKeys`](crate::BuildFromKeys)).
    ConstructionFailed,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InvalidParameter => "invalid parameter",
            Self::TooLarge => "size too large",
            Self::Full => "filter full",
            Self::Incompatible => "incompatible filters",
            Self::Io => "I/O error",
            Self::BadMagic => "not a filterlab filter (bad magic)",
            Self::UnsupportedVersion => "unsupported format version",
            Self::WrongKind => "wrong filter kind",
            Self::InvalidHeader => "invalid header",
            Self::LengthMismatch => "length mismatch",
            Self::Truncated => "truncated input",
            Self::ChecksumMismatch => "checksum mismatch",
            Self::PayloadTooLarge => "payload exceeds the limit",
            Self::ConfigMismatch => "configuration mismatch",
            Self::ConstructionFailed => "construction failed",
        })
    }
}

/// A filterlab error: a matchable [`ErrorKind`] plus a detail for humans.
///
/// # Examples
///
/// ```
/// use filterlab_core::{Error, ErrorKind};
///
/// let err = Error::new(ErrorKind::InvalidParameter, "fpp must be in (0, 1), got 1.5");
/// assert_eq!(err.kind(), ErrorKind::InvalidParameter);
/// assert_eq!(err.to_string(), "invalid parameter: fpp must be in (0, 1), got 1.5");
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    detail: String,
    source: Option<std::io::Error>,
}

impl Error {
    /// An error of `kind` explained by `detail`.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
            source: None,
        }
    }

    /// Shorthand for an [`ErrorKind::InvalidParameter`] error.
    pub fn invalid(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParameter, detail)
    }

    /// The category of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable explanation, without the kind.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.kind, self.detail)
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for Error {
    /// An unexpected end of input becomes [`ErrorKind::Truncated`]; anything
    /// else [`ErrorKind::Io`].
    fn from(err: std::io::Error) -> Self {
        let kind = if err.kind() == std::io::ErrorKind::UnexpectedEof {
            ErrorKind::Truncated
        } else {
            ErrorKind::Io
        };
        Self {
            kind,
            detail: err.to_string(),
            source: Some(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_eof_maps_to_truncated() {
        let err: Error = std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into();
        assert_eq!(err.kind(), ErrorKind::Truncated);
        assert!(std::error::Error::source(&err).is_some());
        let err: Error = std::io::Error::other("disk on fire").into();
        assert_eq!(err.kind(), ErrorKind::Io);
        assert!(err.to_string().contains("disk on fire"));
    }

    #[test]
    fn error_is_send_sync_static() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Error>();
    }
}
