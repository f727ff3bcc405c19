//! Chunked dump and restore, in the manner of RedisBloom's BF.SCANDUMP and
//! BF.LOADCHUNK: the filter's binary format cut into numbered, checksummed
//! chunks of bounded size, each naming the dump it belongs to, and a
//! restore that checks every chunk and the whole before it returns a filter.
//! The chunk layout is documented in the crate README. Written for
//! `ScalableBloomFilter`, and open to any filterlab filter
//! ([`dump_chunks_of`], [`try_restore_chunks_of`]): filterlab-redis-module's
//! CF.SCANDUMP dumps a `CuckooFilter` with them.

use std::io::{self, Read, Write};

use filterlab_core::format::ErrorStash;
use filterlab_core::{Error, ErrorKind, FilterKind, Persist};
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::filter::ScalableBloomFilter;
use crate::layer::Layer;

/// The first eight bytes of every chunk.
pub const CHUNK_MAGIC: [u8; 8] = *b"FLTRCHNK";
/// The chunk layout version this build writes and reads.
pub const CHUNK_VERSION: u16 = 1;
/// Bytes of framing per chunk: a 48-byte header and an 8-byte checksum.
pub const CHUNK_OVERHEAD: usize = CHUNK_HEADER + 8;
/// The chunk size of [`ScalableBloomFilter::dump_chunks`] when the caller
/// has no limit of its own: 1 MiB, framing included.
pub const DEFAULT_CHUNK_BYTES: usize = 1 << 20;
/// The smallest chunk size accepted.
pub const MIN_CHUNK_BYTES: usize = CHUNK_OVERHEAD + 8;
/// The largest chunk size accepted (2 GiB).
pub const MAX_CHUNK_BYTES: usize = 1 << 31;

const CHUNK_HEADER: usize = 48;

/// What every chunk of one dump repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DumpId {
    /// XXH3-64 of the whole dumped byte stream: the dump's identity.
    id: u64,
    /// Chunks in the dump.
    total: u64,
    /// Bytes of the dumped stream (the filter's binary format).
    stream_len: u64,
}

/// Hashes and counts the bytes written to it.
struct Fingerprint {
    hasher: Xxh3,
    len: u64,
}

impl Write for Fingerprint {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.hasher.update(bytes);
        self.len += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Cuts the stream written to it into chunks and hands each to `store`.
struct ChunkWriter<S> {
    kind: FilterKind,
    dump: DumpId,
    data_capacity: usize,
    /// The chunk being filled: header space, then data.
    chunk: Vec<u8>,
    sequence: u64,
    store: S,
    stash: ErrorStash,
}

impl<S: FnMut(u64, &[u8]) -> Result<(), Error>> ChunkWriter<S> {
    fn data_len(&self) -> usize {
        self.chunk.len() - CHUNK_HEADER
    }

    /// Seals the chunk being filled (header and checksum) and stores it.
    fn emit(&mut self) -> Result<(), Error> {
        self.sequence += 1;
        let data_len = self.data_len() as u32;
        let mut header = [0u8; CHUNK_HEADER];
        header[..8].copy_from_slice(&CHUNK_MAGIC);
        header[8..10].copy_from_slice(&CHUNK_VERSION.to_le_bytes());
        header[10..12].copy_from_slice(&self.kind.id().to_le_bytes());
        header[12..16].copy_from_slice(&data_len.to_le_bytes());
        header[16..24].copy_from_slice(&self.dump.id.to_le_bytes());
        header[24..32].copy_from_slice(&self.sequence.to_le_bytes());
        header[32..40].copy_from_slice(&self.dump.total.to_le_bytes());
        header[40..48].copy_from_slice(&self.dump.stream_len.to_le_bytes());
        self.chunk[..CHUNK_HEADER].copy_from_slice(&header);
        let checksum = xxh3_64(&self.chunk);
        self.chunk.extend_from_slice(&checksum.to_le_bytes());
        let stored = (self.store)(self.sequence, &self.chunk);
        self.chunk.truncate(CHUNK_HEADER);
        stored
    }
}

impl<S: FnMut(u64, &[u8]) -> Result<(), Error>> Write for ChunkWriter<S> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let take = bytes.len().min(self.data_capacity - self.data_len());
        self.chunk.extend_from_slice(&bytes[..take]);
        if self.data_len() == self.data_capacity {
            self.emit().map_err(|err| self.stash.keep(err))?;
        }
        Ok(take)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reassembles the stream from chunks pulled one at a time, checking each.
struct ChunkReader<I, B> {
    kind: FilterKind,
    chunks: I,
    /// The chunk being read and the range of its data not read yet.
    current: Option<B>,
    at: usize,
    end: usize,
    /// The next sequence number expected (chunks are numbered from 1).
    expected: u64,
    dump: Option<DumpId>,
    /// Data bytes of every chunk but the last.
    data_capacity: u64,
    /// Stream bytes received.
    offset: u64,
    hasher: Xxh3,
    stash: ErrorStash,
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]))
}

impl<I, B> ChunkReader<I, B>
where
    I: Iterator<Item = Result<(u64, B), Error>>,
    B: AsRef<[u8]>,
{
    fn new(kind: FilterKind, chunks: I) -> Self {
        Self {
            kind,
            chunks,
            current: None,
            at: 0,
            end: 0,
            expected: 1,
            dump: None,
            data_capacity: 0,
            offset: 0,
            hasher: Xxh3::new(),
            stash: ErrorStash::default(),
        }
    }

    /// Pulls and checks the next chunk.
    fn next_chunk(&mut self) -> Result<(), Error> {
        if let Some(dump) = self.dump.filter(|dump| self.expected > dump.total) {
            return Err(Error::new(
                ErrorKind::Truncated,
                format!(
                    "the filter continues past the dump's {} bytes",
                    dump.stream_len
                ),
            ));
        }
        let Some(next) = self.chunks.next() else {
            let had = self.dump.map_or_else(
                || "no chunks".to_owned(),
                |dump| format!("{} chunks", dump.total),
            );
            return Err(Error::new(
                ErrorKind::Truncated,
                format!("the dump of {had} ended before chunk {}", self.expected),
            ));
        };
        let (cursor, chunk) = next?;
        let (at, end) = self.check(cursor, chunk.as_ref())?;
        self.hasher.update(&chunk.as_ref()[at..end]);
        self.current = Some(chunk);
        (self.at, self.end) = (at, end);
        Ok(())
    }

    /// Checks one chunk's framing, checksum and place in the dump; returns
    /// the range of its data.
    fn check(&mut self, cursor: u64, bytes: &[u8]) -> Result<(usize, usize), Error> {
        let (dump, sequence, end) = check_framing(self.kind, cursor, bytes)?;
        let out_of_order = |detail: String| Error::new(ErrorKind::InvalidHeader, detail);
        if cursor != sequence {
            return Err(out_of_order(format!(
                "cursor {cursor} was given with chunk {sequence}"
            )));
        }
        if sequence < self.expected {
            return Err(out_of_order(format!(
                "chunk {sequence} again after chunk {} (repeated or reordered)",
                self.expected - 1
            )));
        }
        if sequence > self.expected {
            return Err(out_of_order(format!(
                "chunk {} is missing (chunk {sequence} came in its place)",
                self.expected
            )));
        }
        let data = (end - CHUNK_HEADER) as u64;
        let fits = match self.dump {
            None => {
                self.dump = Some(dump);
                self.data_capacity = data;
                // Every chunk but the last is full: the first chunk's size
                // and the count must cover the stream exactly, and a first
                // chunk that is also the last holds the whole stream.
                dump.total >= 1
                    && data >= 1
                    && data.checked_mul(dump.total - 1).is_some_and(|full| {
                        full < dump.stream_len && dump.stream_len - full <= data
                    })
                    && (dump.total > 1 || data == dump.stream_len)
            }
            Some(first) if first != dump => {
                return Err(out_of_order(format!(
                    "chunk {sequence} belongs to another dump (id {:#018x}, not {:#018x})",
                    dump.id, first.id
                )));
            }
            Some(first) if sequence == first.total => data == first.stream_len - self.offset,
            Some(_) => data == self.data_capacity,
        };
        if !fits {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                format!("chunk {sequence} holds {data} bytes, which the dump's layout contradicts"),
            ));
        }
        self.offset += data;
        self.expected += 1;
        Ok((CHUNK_HEADER, end))
    }

    /// After the filter was read: the dump must be complete, hold nothing
    /// more, and hash to its identity.
    fn finish(mut self) -> Result<(), Error> {
        let Some(dump) = self.dump else {
            return Err(Error::new(ErrorKind::Truncated, "no chunks"));
        };
        if self.at != self.end || self.expected <= dump.total {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                "the dump holds bytes after the end of the filter",
            ));
        }
        if let Some(extra) = self.chunks.next() {
            let cursor = extra.map_or_else(|err| err.to_string(), |(cursor, _)| cursor.to_string());
            return Err(Error::new(
                ErrorKind::InvalidHeader,
                format!(
                    "chunk {cursor} after the last of {} (repeated or from another dump)",
                    dump.total
                ),
            ));
        }
        if self.hasher.digest() != dump.id {
            return Err(Error::new(
                ErrorKind::ChecksumMismatch,
                "the dump's chunks do not hash to its identity",
            ));
        }
        Ok(())
    }
}

/// Checks one chunk's framing (magic, version, kind, length) and checksum;
/// returns the dump it names, its sequence number and where its data ends.
fn check_framing(
    expected: FilterKind,
    cursor: u64,
    bytes: &[u8],
) -> Result<(DumpId, u64, usize), Error> {
    let short = || {
        Error::new(
            ErrorKind::Truncated,
            format!("chunk {cursor} is cut short ({} bytes)", bytes.len()),
        )
    };
    if bytes.len() < 8 {
        return Err(short());
    }
    if bytes[..8] != CHUNK_MAGIC {
        return Err(Error::new(
            ErrorKind::BadMagic,
            format!("chunk {cursor} is not a filterlab chunk"),
        ));
    }
    if bytes.len() < CHUNK_HEADER {
        return Err(short());
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != CHUNK_VERSION {
        return Err(Error::new(
            ErrorKind::UnsupportedVersion,
            format!("chunk layout version {version}, this build reads {CHUNK_VERSION}"),
        ));
    }
    let kind = u16::from_le_bytes([bytes[10], bytes[11]]);
    if kind != expected.id() {
        return Err(Error::new(
            ErrorKind::WrongKind,
            format!("chunk {cursor} holds a filter of kind {kind}"),
        ));
    }
    let data_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap_or([0; 4])) as usize;
    let end = CHUNK_HEADER + data_len;
    if bytes.len() < end + 8 {
        return Err(short());
    }
    if bytes.len() > end + 8 {
        return Err(Error::new(
            ErrorKind::LengthMismatch,
            format!("{} bytes follow chunk {cursor}", bytes.len() - end - 8),
        ));
    }
    if xxh3_64(&bytes[..end]) != u64_at(bytes, end) {
        return Err(Error::new(
            ErrorKind::ChecksumMismatch,
            format!("chunk {cursor} is corrupted"),
        ));
    }
    let dump = DumpId {
        id: u64_at(bytes, 16),
        total: u64_at(bytes, 32),
        stream_len: u64_at(bytes, 40),
    };
    Ok((dump, u64_at(bytes, 24), end))
}

/// What a chunk's header says about its dump, read by [`inspect_chunk`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChunkHeader {
    /// The chunk's sequence number (its cursor), from 1.
    pub sequence: u64,
    /// Chunks in the dump.
    pub total: u64,
    /// Bytes of the dumped format.
    pub stream_len: u64,
    /// The dump's identity, the XXH3-64 of the whole dumped format.
    pub dump_id: u64,
}

/// Checks one chunk of a dump of kind `kind` on its own (framing, kind,
/// length and checksum) and returns its header: for a store that takes
/// chunks one at a time (BF.LOADCHUNK) and answers each before the dump is
/// complete. Whether the chunks fit together is checked when they are
/// restored.
///
/// # Errors
///
/// [`ErrorKind::BadMagic`], [`ErrorKind::UnsupportedVersion`],
/// [`ErrorKind::WrongKind`], [`ErrorKind::Truncated`],
/// [`ErrorKind::LengthMismatch`] or [`ErrorKind::ChecksumMismatch`].
pub fn inspect_chunk(kind: FilterKind, bytes: &[u8]) -> Result<ChunkHeader, Error> {
    let cursor = bytes.get(24..32).map_or(0, |_| u64_at(bytes, 24));
    let (dump, sequence, _) = check_framing(kind, cursor, bytes)?;
    Ok(ChunkHeader {
        sequence,
        total: dump.total,
        stream_len: dump.stream_len,
        dump_id: dump.id,
    })
}

impl<I, B> Read for ChunkReader<I, B>
where
    I: Iterator<Item = Result<(u64, B), Error>>,
    B: AsRef<[u8]>,
{
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.at == self.end {
            self.next_chunk().map_err(|err| self.stash.keep(err))?;
        }
        let Some(chunk) = &self.current else {
            return Ok(0);
        };
        let count = buf.len().min(self.end - self.at);
        buf[..count].copy_from_slice(&chunk.as_ref()[self.at..self.at + count]);
        self.at += count;
        Ok(count)
    }
}

impl<L: Layer> ScalableBloomFilter<L> {
    /// Writes the filter as numbered chunks of at most `chunk_bytes` bytes
    /// each (framing included; [`DEFAULT_CHUNK_BYTES`] is a sensible
    /// choice), handing each to `store` with its cursor (1, 2, …) as soon
    /// as it is full; returns the number of chunks.
    ///
    /// Memory stays at one chunk whatever the filter's size: the filter is
    /// streamed twice, once to compute the dump's identity (an XXH3-64 of
    /// its bytes, which every chunk carries) and once to cut it. Restore
    /// with [`restore_chunks`](Self::restore_chunks).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`] for a chunk size outside
    /// [`MIN_CHUNK_BYTES`]..=[`MAX_CHUNK_BYTES`]; the first error `store`
    /// returns (the chunks before it were stored).
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_scalable::{Filter, ScalableBloomFilter};
    ///
    /// let mut filter = ScalableBloomFilter::with_fpp(0.01).initial_capacity(1000).build()?;
    /// filter.insert_many(0..5000u64)?;
    /// let mut store = Vec::new(); // a key-value store, a socket, ...
    /// let chunks = filter.dump_chunks(4096, |cursor, chunk| {
    ///     store.push((cursor, chunk.to_vec()));
    ///     Ok(())
    /// })?;
    /// assert_eq!(chunks, store.len() as u64);
    /// let restored = ScalableBloomFilter::restore_chunks(store)?;
    /// assert_eq!(restored, filter);
    /// # Ok::<(), filterlab_scalable::Error>(())
    /// ```
    pub fn dump_chunks(
        &self,
        chunk_bytes: usize,
        store: impl FnMut(u64, &[u8]) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        dump_chunks_of(self, chunk_bytes, store)
    }

    /// Restores a filter from the chunks of [`dump_chunks`](Self::dump_chunks),
    /// given in order with their cursors, pulling one chunk at a time (memory
    /// stays at one chunk beside the filter being rebuilt).
    ///
    /// Every chunk is checked (framing, checksum, cursor, sequence, dump
    /// identity, size) and so is the whole (the filter's own format, the
    /// dump's length and identity, nothing after the last chunk). A
    /// missing, reordered, repeated, truncated or corrupted chunk, or a
    /// chunk of another dump, is an error, and no filter is returned.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidHeader`] for a chunk out of sequence (missing,
    /// reordered, repeated), under the wrong cursor or from another dump;
    /// [`ErrorKind::Truncated`] when the chunks end early or a chunk is cut
    /// short; [`ErrorKind::ChecksumMismatch`] for a corrupted chunk;
    /// [`ErrorKind::BadMagic`], [`ErrorKind::UnsupportedVersion`],
    /// [`ErrorKind::WrongKind`] and [`ErrorKind::LengthMismatch`] for chunks
    /// that are not this dump's layout; and every error of
    /// [`Persist::read_from`] for the filter itself.
    pub fn restore_chunks<I, B>(chunks: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (u64, B)>,
        B: AsRef<[u8]>,
    {
        Self::try_restore_chunks(chunks.into_iter().map(Ok))
    }

    /// As [`restore_chunks`](Self::restore_chunks), from a source that can
    /// fail (a store or a socket): its first error is returned.
    ///
    /// # Errors
    ///
    /// As [`restore_chunks`](Self::restore_chunks), and the source's errors.
    pub fn try_restore_chunks<I, B>(chunks: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = Result<(u64, B), Error>>,
        B: AsRef<[u8]>,
    {
        try_restore_chunks_of(chunks)
    }
}

/// Writes any filterlab filter as the numbered chunks
/// [`ScalableBloomFilter::dump_chunks`] describes (the kind in each chunk
/// is the filter's); returns the number of chunks.
///
/// # Errors
///
/// As [`ScalableBloomFilter::dump_chunks`].
pub fn dump_chunks_of<P: Persist>(
    filter: &P,
    chunk_bytes: usize,
    store: impl FnMut(u64, &[u8]) -> Result<(), Error>,
) -> Result<u64, Error> {
    dump_stream_chunks(P::KIND, chunk_bytes, |out| filter.write_to(out), store)
}

/// Writes the bytes `write` streams (twice: once to compute the dump's
/// identity, once to cut it; both times the same bytes) as numbered
/// chunks of kind `kind`: a filter's format with something of the
/// caller's around it. Read back with [`try_restore_stream_chunks`].
///
/// # Errors
///
/// As [`ScalableBloomFilter::dump_chunks`], and those of `write`.
pub fn dump_stream_chunks(
    kind: FilterKind,
    chunk_bytes: usize,
    write: impl Fn(&mut dyn Write) -> Result<(), Error>,
    store: impl FnMut(u64, &[u8]) -> Result<(), Error>,
) -> Result<u64, Error> {
    if !(MIN_CHUNK_BYTES..=MAX_CHUNK_BYTES).contains(&chunk_bytes) {
        return Err(Error::invalid(format!(
            "chunks must be {MIN_CHUNK_BYTES}..={MAX_CHUNK_BYTES} bytes, got {chunk_bytes}"
        )));
    }
    let mut fingerprint = Fingerprint {
        hasher: Xxh3::new(),
        len: 0,
    };
    write(&mut fingerprint)?;
    let data_capacity = chunk_bytes - CHUNK_OVERHEAD;
    let dump = DumpId {
        id: fingerprint.hasher.digest(),
        total: fingerprint.len.div_ceil(data_capacity as u64),
        stream_len: fingerprint.len,
    };
    let mut chunk = Vec::with_capacity(chunk_bytes);
    chunk.resize(CHUNK_HEADER, 0);
    let mut writer = ChunkWriter {
        kind,
        dump,
        data_capacity,
        chunk,
        sequence: 0,
        store,
        stash: ErrorStash::default(),
    };
    write(&mut writer).map_err(|err| writer.stash.take_or(err))?;
    if writer.data_len() > 0 {
        writer.emit()?;
    }
    debug_assert_eq!(writer.sequence, dump.total);
    Ok(writer.sequence)
}

/// Restores a filter of type `P` from the chunks of [`dump_chunks_of`],
/// checked as [`ScalableBloomFilter::restore_chunks`] checks them (a chunk
/// of another kind is [`ErrorKind::WrongKind`]).
///
/// # Errors
///
/// As [`ScalableBloomFilter::try_restore_chunks`].
pub fn try_restore_chunks_of<P, I, B>(chunks: I) -> Result<P, Error>
where
    P: Persist,
    I: IntoIterator<Item = Result<(u64, B), Error>>,
    B: AsRef<[u8]>,
{
    try_restore_stream_chunks(P::KIND, chunks, |input| P::read_from(input))
}

/// Reads what `read` takes from the chunks of [`dump_stream_chunks`]
/// (pulled one at a time), checked as
/// [`ScalableBloomFilter::restore_chunks`] checks them: `read` must take
/// the whole dumped stream.
///
/// # Errors
///
/// As [`ScalableBloomFilter::try_restore_chunks`], and those of `read`.
pub fn try_restore_stream_chunks<T, I, B>(
    kind: FilterKind,
    chunks: I,
    read: impl FnOnce(&mut dyn Read) -> Result<T, Error>,
) -> Result<T, Error>
where
    I: IntoIterator<Item = Result<(u64, B), Error>>,
    B: AsRef<[u8]>,
{
    let mut reader = ChunkReader::new(kind, chunks.into_iter());
    let value = read(&mut reader).map_err(|err| reader.stash.take_or(err))?;
    reader.finish()?;
    Ok(value)
}
