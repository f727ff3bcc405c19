//! Adapters between filterlab's framing and `std::io`, which the layers'
//! own `write_to`/`read_from` and the chunked dump need.
//!
//! An `io::Error` cannot carry a filterlab [`ErrorKind`], so each adapter
//! keeps the first filterlab error it met in a [`Stash`] and the caller
//! returns that instead of what the `io::Error` turned into.

use std::io::{self, Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter};
use filterlab_core::{Error, ErrorKind};

/// The first filterlab error an adapter met.
#[derive(Debug, Default)]
pub(crate) struct Stash(Option<Error>);

impl Stash {
    /// Keeps `err` (unless an earlier one is kept) and returns the
    /// `io::Error` to pass up: an unexpected end for truncated input, so
    /// that readers report [`ErrorKind::Truncated`] on their own as well.
    pub(crate) fn keep(&mut self, err: Error) -> io::Error {
        let kind = if err.kind() == ErrorKind::Truncated {
            io::ErrorKind::UnexpectedEof
        } else {
            io::ErrorKind::Other
        };
        let io = io::Error::new(kind, err.to_string());
        self.0.get_or_insert(err);
        io
    }

    /// The kept error if there is one, else `err`.
    pub(crate) fn take_or(&mut self, err: Error) -> Error {
        self.0.take().unwrap_or(err)
    }
}

/// Writes a nested filter's bytes into the payload of the enclosing frame.
pub(crate) struct PayloadWriter<'a, W: Write> {
    pub(crate) frame: &'a mut FrameWriter<W>,
    pub(crate) stash: Stash,
}

impl<W: Write> Write for PayloadWriter<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self.frame.write_bytes(bytes) {
            Ok(()) => Ok(bytes.len()),
            Err(err) => Err(self.stash.keep(err)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads nested filters from the payload of the enclosing frame, never
/// past its end.
pub(crate) struct PayloadReader<'a, R: Read> {
    pub(crate) frame: &'a mut FrameReader<R>,
    /// Payload bytes not read yet.
    pub(crate) remaining: u64,
    pub(crate) stash: Stash,
}

impl<R: Read> Read for PayloadReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.remaining == 0 {
            return Err(self.stash.keep(Error::new(
                ErrorKind::LengthMismatch,
                "the layers run past the end of the payload",
            )));
        }
        let count = buf
            .len()
            .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        match self.frame.read_bytes_into(&mut buf[..count]) {
            Ok(()) => {
                self.remaining -= count as u64;
                Ok(count)
            }
            Err(err) => Err(self.stash.keep(err)),
        }
    }
}
