//! The harness's error: a message for the user and whether the user caused it.

use std::fmt;

/// Why a command failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The arguments are wrong (exit code 2, like clap's own usage errors).
    Usage,
    /// Something failed while running: I/O, a filter refusing its configuration.
    Failed,
    /// The report was written but a filterlab filter failed the accuracy gate.
    Gate,
}

/// A harness error: a kind and a message for humans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// A usage error: bad arguments.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Usage,
            message: message.into(),
        }
    }

    /// A failure while running.
    pub fn failed(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Failed,
            message: message.into(),
        }
    }

    /// The accuracy gate failed.
    pub fn gate(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Gate,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            ErrorKind::Usage => 2,
            ErrorKind::Failed => 1,
            ErrorKind::Gate => 3,
        }
    }

    /// Prefixes the message with what was being done.
    #[must_use]
    pub fn context(self, what: impl fmt::Display) -> Self {
        Self {
            kind: self.kind,
            message: format!("{what}: {}", self.message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<filterlab_core::Error> for Error {
    fn from(err: filterlab_core::Error) -> Self {
        let kind = if err.kind() == filterlab_core::ErrorKind::InvalidParameter {
            ErrorKind::Usage
        } else {
            ErrorKind::Failed
        };
        Self {
            kind,
            message: err.to_string(),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Self::failed(err.to_string())
    }
}

impl From<csv::Error> for Error {
    fn from(err: csv::Error) -> Self {
        Self::failed(err.to_string())
    }
}
