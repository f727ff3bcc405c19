//! The data types' RDB payload: what `rdb_save` writes and `rdb_load`
//! reads through the server's RDB primitives, which this module sees as a
//! [`Sink`] and a [`Source`] (the server's in the module, plain vectors in
//! the tests and the fuzz target).
//!
//! A value is a tag (which filter, or a restore under way) and its fields
//! as unsigned integers, then a filter in filterlab's own versioned,
//! checksummed format, streamed as string buffers of at most
//! [`PIECE_BYTES`] and ended by an empty one, so that saving never copies
//! a whole filter. Loading checks everything the format's reader checks;
//! nothing is allocated from a length the payload claims before those
//! bytes arrive.

use std::io::{self, Read, Write};

use filterlab_core::format::ErrorStash;
use filterlab_core::{Error, ErrorKind};

/// The largest string buffer a filter is cut into when saved (1 MiB).
pub const PIECE_BYTES: usize = 1 << 20;

/// Where a value is saved: the server's `RedisModule_Save*`.
pub trait Sink {
    /// `RedisModule_SaveUnsigned`.
    fn unsigned(&mut self, value: u64);
    /// `RedisModule_SaveStringBuffer`.
    fn buffer(&mut self, bytes: &[u8]);
}

/// Where a value is loaded from: the server's `RedisModule_Load*`.
pub trait Source {
    /// A loaded string buffer (freed when dropped).
    type Buffer: AsRef<[u8]>;
    /// `RedisModule_LoadUnsigned`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Truncated`] when the payload ends (or the server's
    /// reader fails).
    fn unsigned(&mut self) -> Result<u64, Error>;
    /// `RedisModule_LoadStringBuffer`.
    ///
    /// # Errors
    ///
    /// As [`unsigned`](Self::unsigned).
    fn buffer(&mut self) -> Result<Self::Buffer, Error>;
}

/// Writes what `write` streams as pieces of at most [`PIECE_BYTES`], then
/// the empty piece that ends them.
///
/// # Errors
///
/// Those of `write`.
pub fn save_stream<S: Sink + ?Sized>(
    sink: &mut S,
    write: impl FnOnce(&mut dyn Write) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut pieces = PieceWriter {
        sink,
        piece: Vec::new(),
    };
    let written = write(&mut pieces);
    pieces.flush_piece();
    pieces.sink.buffer(&[]);
    written
}

/// Reads a value `read` takes from the pieces [`save_stream`] wrote,
/// checking that it took all of them.
///
/// # Errors
///
/// Those of `read` and of the source; [`ErrorKind::LengthMismatch`] when
/// bytes are left after the value.
pub fn load_stream<S: Source + ?Sized, T>(
    source: &mut S,
    read: impl FnOnce(&mut dyn Read) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut pieces = PieceReader {
        source,
        piece: None,
        at: 0,
        ended: false,
        stash: ErrorStash::default(),
    };
    let value = read(&mut pieces).map_err(|err| pieces.stash.take_or(err))?;
    pieces.finish()?;
    Ok(value)
}

struct PieceWriter<'a, S: Sink + ?Sized> {
    sink: &'a mut S,
    piece: Vec<u8>,
}

impl<S: Sink + ?Sized> PieceWriter<'_, S> {
    fn flush_piece(&mut self) {
        if !self.piece.is_empty() {
            self.sink.buffer(&self.piece);
            self.piece.clear();
        }
    }
}

impl<S: Sink + ?Sized> Write for PieceWriter<'_, S> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let take = bytes.len().min(PIECE_BYTES - self.piece.len());
        self.piece.extend_from_slice(&bytes[..take]);
        if self.piece.len() == PIECE_BYTES {
            self.flush_piece();
        }
        Ok(take)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct PieceReader<'a, S: Source + ?Sized> {
    source: &'a mut S,
    piece: Option<S::Buffer>,
    at: usize,
    ended: bool,
    stash: ErrorStash,
}

impl<S: Source + ?Sized> PieceReader<'_, S> {
    fn left(&self) -> usize {
        self.piece
            .as_ref()
            .map_or(0, |piece| piece.as_ref().len() - self.at)
    }

    /// Pulls the next piece; `false` at the empty one that ends them.
    fn next_piece(&mut self) -> Result<bool, Error> {
        let piece = self.source.buffer()?;
        self.at = 0;
        if piece.as_ref().is_empty() {
            self.ended = true;
            self.piece = None;
            return Ok(false);
        }
        if piece.as_ref().len() > PIECE_BYTES {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                format!(
                    "a piece of {} bytes, more than the {PIECE_BYTES} saved at most",
                    piece.as_ref().len()
                ),
            ));
        }
        self.piece = Some(piece);
        Ok(true)
    }

    /// After the value: nothing may be left before the end.
    fn finish(mut self) -> Result<(), Error> {
        if self.left() > 0 || (!self.ended && self.next_piece()?) {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                "bytes follow the filter in the payload",
            ));
        }
        Ok(())
    }
}

impl<S: Source + ?Sized> Read for PieceReader<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.left() == 0 {
            if self.ended {
                return Ok(0);
            }
            match self.next_piece() {
                Ok(_) => {}
                Err(err) => return Err(self.stash.keep(err)),
            }
        }
        let Some(piece) = &self.piece else {
            return Ok(0);
        };
        let count = buf.len().min(self.left());
        buf[..count].copy_from_slice(&piece.as_ref()[self.at..self.at + count]);
        self.at += count;
        Ok(count)
    }
}

/// A payload in memory: what the tests and the fuzz target save to and
/// load from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The items, in order.
    pub items: Vec<Item>,
    /// The next item to load.
    pub at: usize,
}

/// One item of a [`Recorded`] payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// An unsigned integer.
    Unsigned(u64),
    /// A string buffer.
    Buffer(Vec<u8>),
}

impl Sink for Recorded {
    fn unsigned(&mut self, value: u64) {
        self.items.push(Item::Unsigned(value));
    }

    fn buffer(&mut self, bytes: &[u8]) {
        self.items.push(Item::Buffer(bytes.to_vec()));
    }
}

impl Source for Recorded {
    type Buffer = Vec<u8>;

    fn unsigned(&mut self) -> Result<u64, Error> {
        match self.items.get(self.at) {
            Some(Item::Unsigned(value)) => {
                self.at += 1;
                Ok(*value)
            }
            _ => Err(Error::new(
                ErrorKind::Truncated,
                format!("no unsigned integer at item {}", self.at),
            )),
        }
    }

    fn buffer(&mut self) -> Result<Vec<u8>, Error> {
        match self.items.get(self.at) {
            Some(Item::Buffer(bytes)) => {
                self.at += 1;
                Ok(bytes.clone())
            }
            _ => Err(Error::new(
                ErrorKind::Truncated,
                format!("no string buffer at item {}", self.at),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_comes_back_in_pieces() {
        let data: Vec<u8> = (0..(PIECE_BYTES * 2 + 17) as u32)
            .map(|i| i as u8)
            .collect();
        let mut saved = Recorded::default();
        save_stream(&mut saved, |out| out.write_all(&data).map_err(Error::from)).unwrap();
        // Two full pieces, the rest, the end.
        assert_eq!(saved.items.len(), 4);
        assert_eq!(saved.items[3], Item::Buffer(Vec::new()));
        let loaded = load_stream(&mut saved.clone(), |input| {
            let mut back = Vec::new();
            input.read_to_end(&mut back).map_err(Error::from)?;
            Ok(back)
        })
        .unwrap();
        assert_eq!(loaded, data);
        // A reader that stops early leaves bytes: refused.
        let err = load_stream(&mut saved, |input| {
            let mut head = [0u8; 10];
            input.read_exact(&mut head).map_err(Error::from)
        })
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LengthMismatch);
    }
}
