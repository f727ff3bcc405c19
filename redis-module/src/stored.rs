//! What a key of either data type holds: a filter, or a filter being
//! restored chunk by chunk (BF.LOADCHUNK / CF.LOADCHUNK), and what both
//! families share: the dump and its chunks, the restore, the RDB payload.
//!
//! A dump is the filter's stream (its format, with the value's own fields
//! before it) cut into the checksummed chunks of filterlab-scalable's
//! chunk layout. A restore keeps the chunks it was given under the key
//! until the last one arrives, then checks the whole and replaces them
//! with the filter; until then the key answers only LOADCHUNK.

use std::io::{Read, Write};

use filterlab_core::{Error, ErrorKind, FilterKind};
use filterlab_scalable::{
    CHUNK_OVERHEAD, MIN_CHUNK_BYTES, dump_stream_chunks, inspect_chunk, try_restore_stream_chunks,
};

use crate::payload::{Sink, Source, load_stream, save_stream};

/// The largest chunk SCANDUMP replies and AOF rewrite emits: 16 MiB, as
/// RedisBloom's (well under the server's 512 MiB bulk-string limit).
pub const MAX_DUMP_CHUNK: usize = 16 << 20;

/// A filter value of one of the two data types.
pub trait FilterValue: Sized {
    /// The kind its dump chunks carry.
    const KIND: FilterKind;

    /// Writes the value's stream: its fields, then its filter's format.
    ///
    /// # Errors
    ///
    /// Those of `out`.
    fn write_stream(&self, out: &mut dyn Write) -> Result<(), Error>;

    /// Reads what [`write_stream`](Self::write_stream) wrote, checking
    /// everything filterlab's format reader checks.
    ///
    /// # Errors
    ///
    /// A typed error for every way the stream can be wrong.
    fn read_stream(input: &mut dyn Read) -> Result<Self, Error>;

    /// Bytes of the filter's storage, which sizes its dump's chunks.
    fn storage_bytes(&self) -> usize;

    /// Whether SCANDUMP has nothing to dump (RedisBloom's CF replies
    /// `[0, nil]` for a filter without items).
    fn dumps_nothing(&self) -> bool {
        false
    }
}

/// A key's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Stored<F> {
    /// A filter answering commands.
    Ready(F),
    /// The chunks of a dump given so far, waiting for the rest.
    Restoring(Pending),
}

/// The chunks of a dump given to LOADCHUNK so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    total: u64,
    dump_id: u64,
    chunks: Vec<Vec<u8>>,
}

impl Pending {
    /// Chunks given, and chunks the dump has.
    pub fn progress(&self) -> (u64, u64) {
        (self.chunks.len() as u64, self.total)
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// The chunks, in order.
    pub fn chunks(&self) -> &[Vec<u8>] {
        &self.chunks
    }
}

/// The chunk data size of a dump: half the filter's storage, so that
/// every dump has at least two chunks (as RedisBloom's, whose first is a
/// header, so that the tools written for those see the same shape), and
/// at most [`MAX_DUMP_CHUNK`] with the framing.
fn chunk_bytes<F: FilterValue>(filter: &F) -> usize {
    let half = filter.storage_bytes().div_ceil(2);
    (half + CHUNK_OVERHEAD).clamp(MIN_CHUNK_BYTES, MAX_DUMP_CHUNK)
}

/// Every chunk of `filter`'s dump, in order, handed to `emit` with its
/// cursor (AOF rewrite); returns how many.
///
/// # Errors
///
/// The first error of `emit`.
pub fn dump_all<F: FilterValue>(
    filter: &F,
    emit: impl FnMut(u64, &[u8]) -> Result<(), Error>,
) -> Result<u64, Error> {
    dump_stream_chunks(
        F::KIND,
        chunk_bytes(filter),
        |out| filter.write_stream(out),
        emit,
    )
}

/// What SCANDUMP replies for `cursor`: the chunk after it and its cursor
/// (chunk 1 for cursor 0), or `None` past the last chunk (and for a
/// negative cursor, or a filter that dumps nothing).
///
/// # Errors
///
/// Never in practice: writing a filter's format to memory does not fail.
pub fn dump_after<F: FilterValue>(
    filter: &F,
    cursor: i64,
) -> Result<Option<(u64, Vec<u8>)>, Error> {
    let Ok(wanted) = u64::try_from(cursor).map(|cursor| cursor.saturating_add(1)) else {
        return Ok(None);
    };
    if filter.dumps_nothing() {
        return Ok(None);
    }
    let mut found = None;
    let dumped = dump_all(filter, |at, chunk| {
        if at == wanted {
            found = Some((at, chunk.to_vec()));
            // Stop here: nothing after this chunk is needed.
            return Err(Error::new(ErrorKind::Io, "found"));
        }
        Ok(())
    });
    match (found, dumped) {
        (Some(chunk), _) => Ok(Some(chunk)),
        (None, Ok(_)) => Ok(None),
        (None, Err(err)) => Err(err),
    }
}

/// What LOADCHUNK did.
#[derive(Debug)]
pub enum Loaded<F> {
    /// The first chunk of a dump of several: the key now holds this.
    Started(Stored<F>),
    /// A further chunk, kept; the dump is not complete yet.
    Kept,
    /// The last chunk: the dump restored to this filter.
    Restored(F),
}

/// Why LOADCHUNK refused a chunk; each family words it as RedisBloom does.
#[derive(Debug)]
pub enum ChunkRefusal {
    /// No filter and no restore under the key, and the chunk is not the first.
    NotFound,
    /// A first chunk for a key that holds a filter or a restore.
    Exists,
    /// The cursor is not the one the restore expects next.
    Offset,
    /// The chunk is damaged or belongs to another dump.
    BadChunk(Error),
    /// The chunks are complete, and the whole does not restore: the
    /// restore under way is dropped.
    BadDump(Error),
}

/// Loads one chunk of a dump into `current` (the key's value; `None` for an
/// empty key) under `cursor`.
///
/// # Errors
///
/// A [`ChunkRefusal`]; the key's value is then unchanged, but for
/// [`ChunkRefusal::BadDump`], after which the caller deletes the key.
#[allow(clippy::needless_pass_by_value)] // a reference, or none: matched once
pub fn load_chunk<F: FilterValue>(
    current: Option<&mut Stored<F>>,
    cursor: i64,
    chunk: &[u8],
) -> Result<Loaded<F>, ChunkRefusal> {
    match current {
        None if cursor == 1 => {
            let header = inspect_chunk(F::KIND, chunk).map_err(ChunkRefusal::BadChunk)?;
            if header.sequence != 1 {
                return Err(ChunkRefusal::BadChunk(Error::new(
                    ErrorKind::InvalidHeader,
                    format!("chunk {} given as chunk 1", header.sequence),
                )));
            }
            let pending = Pending {
                total: header.total,
                dump_id: header.dump_id,
                chunks: vec![chunk.to_vec()],
            };
            if header.total == 1 {
                return restore(&pending).map(Loaded::Restored);
            }
            Ok(Loaded::Started(Stored::Restoring(pending)))
        }
        None => Err(ChunkRefusal::NotFound),
        Some(_) if cursor == 1 => Err(ChunkRefusal::Exists),
        Some(Stored::Ready(_)) => Err(ChunkRefusal::Offset),
        Some(Stored::Restoring(pending)) => {
            let next = pending.chunks.len() as u64 + 1;
            if u64::try_from(cursor) != Ok(next) {
                return Err(ChunkRefusal::Offset);
            }
            let header = inspect_chunk(F::KIND, chunk).map_err(ChunkRefusal::BadChunk)?;
            if header.sequence != next || header.dump_id != pending.dump_id {
                return Err(ChunkRefusal::BadChunk(Error::new(
                    ErrorKind::InvalidHeader,
                    format!(
                        "chunk {} of dump {:#018x} given as chunk {next} of dump {:#018x}",
                        header.sequence, header.dump_id, pending.dump_id
                    ),
                )));
            }
            pending.chunks.push(chunk.to_vec());
            if next < pending.total {
                return Ok(Loaded::Kept);
            }
            restore(pending).map(Loaded::Restored)
        }
    }
}

/// What a key holds after LOADCHUNK of each of `chunks` (cursor and
/// bytes) in turn, from empty: a dump's chunks in order restore its filter.
///
/// # Errors
///
/// The first chunk refused.
pub fn load_chunks<'a, F: FilterValue>(
    chunks: impl IntoIterator<Item = (u64, &'a [u8])>,
) -> Result<Option<Stored<F>>, ChunkRefusal> {
    let mut key = None;
    for (cursor, chunk) in chunks {
        let cursor = i64::try_from(cursor).unwrap_or(i64::MAX);
        match load_chunk(key.as_mut(), cursor, chunk)? {
            Loaded::Started(started) => key = Some(started),
            Loaded::Kept => {}
            Loaded::Restored(restored) => key = Some(Stored::Ready(restored)),
        }
    }
    Ok(key)
}

/// The filter the complete chunks of `pending` restore to.
fn restore<F: FilterValue>(pending: &Pending) -> Result<F, ChunkRefusal> {
    let chunks = (1u64..).zip(&pending.chunks).map(Ok);
    try_restore_stream_chunks(F::KIND, chunks, F::read_stream).map_err(ChunkRefusal::BadDump)
}

/// RDB tag of a filter.
const TAG_READY: u64 = 1;
/// RDB tag of a restore under way.
const TAG_RESTORING: u64 = 2;

impl<F: FilterValue> Stored<F> {
    /// Saves the value: its tag, then the filter's stream in pieces (or the
    /// restore's dump size and chunks).
    ///
    /// # Errors
    ///
    /// Never in practice (writing to the server's RDB reports its own
    /// errors there).
    pub fn save<S: Sink + ?Sized>(&self, sink: &mut S) -> Result<(), Error> {
        match self {
            Self::Ready(filter) => {
                sink.unsigned(TAG_READY);
                save_stream(sink, |out| filter.write_stream(out))
            }
            Self::Restoring(pending) => {
                sink.unsigned(TAG_RESTORING);
                sink.unsigned(pending.chunks.len() as u64);
                for chunk in &pending.chunks {
                    sink.buffer(chunk);
                }
                Ok(())
            }
        }
    }

    /// Loads what [`save`](Self::save) saved, with encoding version
    /// `version` (the data type's: 1).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnsupportedVersion`] for another version, and a typed
    /// error for every way the payload can be damaged: an unknown tag, a
    /// filter its format's reader refuses, chunks out of order or of
    /// another dump, a restore that claims to be complete.
    pub fn load<S: Source + ?Sized>(source: &mut S, version: i32) -> Result<Self, Error> {
        if version != 1 {
            return Err(Error::new(
                ErrorKind::UnsupportedVersion,
                format!("encoding version {version}, this module reads 1"),
            ));
        }
        match source.unsigned()? {
            TAG_READY => load_stream(source, F::read_stream).map(Self::Ready),
            TAG_RESTORING => {
                let count = source.unsigned()?;
                let mut pending = Pending {
                    total: 0,
                    dump_id: 0,
                    chunks: Vec::new(),
                };
                for sequence in 1..=count {
                    let chunk = source.buffer()?;
                    let header = inspect_chunk(F::KIND, chunk.as_ref())?;
                    if sequence == 1 {
                        (pending.total, pending.dump_id) = (header.total, header.dump_id);
                    }
                    if header.sequence != sequence
                        || header.dump_id != pending.dump_id
                        || sequence >= pending.total
                    {
                        return Err(Error::new(
                            ErrorKind::InvalidHeader,
                            format!(
                                "chunk {sequence} of a restore under way is chunk {} of {} of dump \
                                 {:#018x}",
                                header.sequence, header.total, header.dump_id
                            ),
                        ));
                    }
                    pending.chunks.push(chunk.as_ref().to_vec());
                }
                if pending.chunks.is_empty() {
                    return Err(Error::new(
                        ErrorKind::InvalidHeader,
                        "a restore under way without chunks",
                    ));
                }
                Ok(Self::Restoring(pending))
            }
            tag => Err(Error::new(
                ErrorKind::InvalidHeader,
                format!("unknown value tag {tag}"),
            )),
        }
    }

    /// The filter, when the key holds one.
    pub fn ready(&self) -> Option<&F> {
        match self {
            Self::Ready(filter) => Some(filter),
            Self::Restoring(_) => None,
        }
    }
}
