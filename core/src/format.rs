//! The binary framing every filter is written in, and the [`Persist`] trait
//! that gives each filter `write_to`/`read_from`/`to_bytes`/`from_bytes`.
//!
//! A file is a header, a payload and a trailing checksum, little-endian
//! throughout:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `FLTRLAB\0` |
//! | 8 | 2 | format version (1) |
//! | 10 | 2 | filter kind ([`FilterKind::id`]) |
//! | 12 | 2 | hash algorithm id ([`crate::HashAlgorithm::id`]) |
//! | 14 | 2 | number of parameters P (at most [`MAX_PARAMS`]) |
//! | 16 | 8 | hash seed |
//! | 24 | 8 | item counter (the filter's `len`) |
//! | 32 | 8 | payload length in bytes |
//! | 40 | 8·P | the filter's parameters, one `u64` each |
//! | 40 + 8P | 8 | XXH3-64 (seed 0) of the header bytes above |
//! | 48 + 8P | payload length | the payload |
//! | end − 8 | 8 | XXH3-64 (seed 0) of every byte before it |
//!
//! The header has its own checksum so that a corrupted length or parameter is
//! caught before anything is sized from it. Readers never allocate more than
//! the bytes actually received: a crafted length fails as truncated input, not
//! as an allocation.

use std::fmt;
use std::io::{self, Read, Write};

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::{Error, ErrorKind, KeyHasher};

/// The first eight bytes of every filterlab file.
pub const MAGIC: [u8; 8] = *b"FLTRLAB\0";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// The most parameters a header may carry.
pub const MAX_PARAMS: usize = 32;
/// The payload limit of [`Persist::read_from`]: 64 GiB. Use
/// [`Persist::read_from_with_limit`] to lower or raise it.
pub const DEFAULT_PAYLOAD_LIMIT: u64 = 1 << 36;

/// Bytes in a header with no parameters, its checksum included.
const FIXED_HEADER_LEN: usize = 48;
/// Payloads are streamed in chunks of this many bytes.
const CHUNK_BYTES: usize = 1 << 16;

/// Which filter a file holds: the registry of kind ids.
///
/// An id, once written to a file, means that kind forever; a new kind takes
/// the next free id and is added here before its crate writes a byte.
///
/// | id | kind | written by | status |
/// |---|---|---|---|
/// | 1 | [`Bloom`](Self::Bloom) | `filterlab_bloom::BloomFilter`, `AtomicBloomFilter` | in use |
/// | 2 | [`BlockedBloom`](Self::BlockedBloom) | `filterlab_bloom::BlockedBloomFilter` | in use |
/// | 3 | [`CountingBloom`](Self::CountingBloom) | `filterlab_counting_bloom` | reserved |
/// | 4 | [`ScalableBloom`](Self::ScalableBloom) | `filterlab_scalable` | reserved |
/// | 5 | [`Cuckoo`](Self::Cuckoo) | `filterlab_cuckoo` | reserved |
/// | 6 | [`DedupCheckpoint`](Self::DedupCheckpoint) | `filterlab_dedup` checkpoints | reserved |
/// | 7 | [`SplitBlockBloom`](Self::SplitBlockBloom) | `filterlab_bloom::SplitBlockBloomFilter` | in use |
/// | 8 | [`Ribbon`](Self::Ribbon) | `filterlab_static::RibbonFilter` | in use |
/// | 9 | [`BinaryFuse`](Self::BinaryFuse) | `filterlab_static::BinaryFuseFilter` (every fingerprint width and arity) | in use |
///
/// Id 0 is never used, so a zeroed header is never a valid kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FilterKind {
    /// `filterlab_bloom::BloomFilter`.
    Bloom,
    /// `filterlab_bloom::BlockedBloomFilter`.
    BlockedBloom,
    /// `filterlab_counting_bloom::CountingBloomFilter`.
    CountingBloom,
    /// `filterlab_scalable::ScalableBloomFilter`.
    ScalableBloom,
    /// `filterlab_cuckoo::CuckooFilter`.
    Cuckoo,
    /// A `filterlab_dedup` checkpoint: a de-duplicator's partitions and counters.
    DedupCheckpoint,
    /// `filterlab_bloom::SplitBlockBloomFilter`.
    SplitBlockBloom,
    /// `filterlab_static::RibbonFilter`.
    Ribbon,
    /// `filterlab_static::BinaryFuseFilter`, of any fingerprint width and
    /// arity (both are parameters of the header).
    BinaryFuse,
}

impl FilterKind {
    const ALL: [Self; 9] = [
        Self::Bloom,
        Self::BlockedBloom,
        Self::CountingBloom,
        Self::ScalableBloom,
        Self::Cuckoo,
        Self::DedupCheckpoint,
        Self::SplitBlockBloom,
        Self::Ribbon,
        Self::BinaryFuse,
    ];

    /// The id stored in the header.
    pub const fn id(self) -> u16 {
        match self {
            Self::Bloom => 1,
            Self::BlockedBloom => 2,
            Self::CountingBloom => 3,
            Self::ScalableBloom => 4,
            Self::Cuckoo => 5,
            Self::DedupCheckpoint => 6,
            Self::SplitBlockBloom => 7,
            Self::Ribbon => 8,
            Self::BinaryFuse => 9,
        }
    }

    /// The kind with the given id, if there is one.
    pub fn from_id(id: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.id() == id)
    }

    /// A human-readable name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bloom => "Bloom",
            Self::BlockedBloom => "blocked Bloom",
            Self::CountingBloom => "counting Bloom",
            Self::ScalableBloom => "scalable Bloom",
            Self::Cuckoo => "cuckoo",
            Self::DedupCheckpoint => "dedup checkpoint",
            Self::SplitBlockBloom => "split-block Bloom",
            Self::Ribbon => "Ribbon",
            Self::BinaryFuse => "binary fuse",
        }
    }
}

impl fmt::Display for FilterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything in a file before the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The filter kind.
    pub kind: FilterKind,
    /// The key hasher (algorithm and seed).
    pub hasher: KeyHasher,
    /// The item counter.
    pub items: u64,
    /// Kind-specific parameters (sizes, hash counts, ...), at most [`MAX_PARAMS`].
    pub params: Vec<u64>,
    /// The payload length in bytes.
    pub payload_len: u64,
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(FIXED_HEADER_LEN + 8 * self.params.len());
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&self.kind.id().to_le_bytes());
        bytes.extend_from_slice(&self.hasher.algorithm().id().to_le_bytes());
        bytes.extend_from_slice(&(self.params.len() as u16).to_le_bytes());
        bytes.extend_from_slice(&self.hasher.seed().to_le_bytes());
        bytes.extend_from_slice(&self.items.to_le_bytes());
        bytes.extend_from_slice(&self.payload_len.to_le_bytes());
        for param in &self.params {
            bytes.extend_from_slice(&param.to_le_bytes());
        }
        let checksum = xxh3_64(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        bytes
    }

    /// The parameter at `index`, or an [`ErrorKind::InvalidHeader`] error
    /// naming it when the header has too few.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidHeader`] when `index` is out of range.
    pub fn param(&self, index: usize, name: &str) -> Result<u64, Error> {
        self.params.get(index).copied().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidHeader,
                format!("missing parameter {index} ({name})"),
            )
        })
    }

    /// Checks that the header has exactly `count` parameters.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidHeader`] otherwise.
    pub fn expect_params(&self, count: usize) -> Result<(), Error> {
        if self.params.len() == count {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::InvalidHeader,
                format!(
                    "{} filter needs {count} parameters, header has {}",
                    self.kind,
                    self.params.len()
                ),
            ))
        }
    }

    /// Checks that the payload length is what the parameters imply.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] otherwise.
    pub fn expect_payload_len(&self, expected: u64) -> Result<(), Error> {
        if self.payload_len == expected {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::LengthMismatch,
                format!(
                    "payload is {} bytes, the parameters imply {expected}",
                    self.payload_len
                ),
            ))
        }
    }
}

/// A writer that frames a payload: it writes the header on creation, counts
/// and checksums the payload, and appends the checksum on [`finish`](Self::finish).
pub struct FrameWriter<W: Write> {
    inner: W,
    /// None for a payload written alone ([`payload_only`](Self::payload_only)),
    /// which has no checksum to compute.
    checksum: Option<Xxh3>,
    remaining: u64,
    buffer: Vec<u8>,
}

impl<W: Write> FrameWriter<W> {
    /// Writes `header` to `inner` and returns a writer for its payload.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] when writing fails; [`ErrorKind::InvalidParameter`]
    /// when the header has more than [`MAX_PARAMS`] parameters.
    pub fn new(mut inner: W, header: &Header) -> Result<Self, Error> {
        if header.params.len() > MAX_PARAMS {
            return Err(Error::invalid(format!(
                "a header holds at most {MAX_PARAMS} parameters"
            )));
        }
        let bytes = header.encode();
        inner.write_all(&bytes)?;
        let mut checksum = Xxh3::new();
        checksum.update(&bytes);
        Ok(Self {
            inner,
            checksum: Some(checksum),
            remaining: header.payload_len,
            buffer: Vec::with_capacity(CHUNK_BYTES),
        })
    }

    /// A writer of `header`'s payload alone: no header before it, no
    /// checksum after it (see [`Persist::write_payload_to`]).
    pub fn payload_only(inner: W, header: &Header) -> Self {
        Self {
            inner,
            checksum: None,
            remaining: header.payload_len,
            buffer: Vec::with_capacity(CHUNK_BYTES),
        }
    }

    /// Appends raw payload bytes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] when writing fails; [`ErrorKind::LengthMismatch`]
    /// when this would exceed the header's payload length.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() as u64 > self.remaining {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                "payload longer than its header says",
            ));
        }
        self.remaining -= bytes.len() as u64;
        if let Some(checksum) = &mut self.checksum {
            checksum.update(bytes);
        }
        self.inner.write_all(bytes)?;
        Ok(())
    }

    /// Runs `write` with the payload as a [`Write`]r, for files nested in
    /// this one (each written by its own [`Persist::write_to`]); see
    /// [`Nested`]. An error the frame raised under `write` is
    /// returned as it was, not as what passing through `io::Error` made of
    /// it.
    ///
    /// # Errors
    ///
    /// Whatever `write` returns; writing past the payload length is
    /// [`ErrorKind::LengthMismatch`].
    pub fn write_nested<T>(
        &mut self,
        write: impl FnOnce(&mut Nested<'_, Self>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        Nested::run(self, write)
    }

    /// Appends 64-bit words, little-endian, in bounded chunks.
    ///
    /// # Errors
    ///
    /// As [`write_bytes`](Self::write_bytes).
    pub fn write_words(&mut self, words: &[u64]) -> Result<(), Error> {
        for chunk in words.chunks(CHUNK_BYTES / 8) {
            let mut buffer = std::mem::take(&mut self.buffer);
            buffer.clear();
            for word in chunk {
                buffer.extend_from_slice(&word.to_le_bytes());
            }
            let result = self.write_bytes(&buffer);
            self.buffer = buffer;
            result?;
        }
        Ok(())
    }

    /// Writes the checksum and returns the inner writer.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] when fewer payload bytes were written
    /// than the header announced; [`ErrorKind::Io`] when writing fails.
    pub fn finish(mut self) -> Result<W, Error> {
        if self.remaining != 0 {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                format!(
                    "payload {} bytes shorter than its header says",
                    self.remaining
                ),
            ));
        }
        if let Some(checksum) = &self.checksum {
            self.inner.write_all(&checksum.digest().to_le_bytes())?;
        }
        self.inner.flush()?;
        Ok(self.inner)
    }
}

/// The first filterlab error met under an `std::io` adapter.
///
/// An `io::Error` cannot carry an [`ErrorKind`], so an adapter that turns
/// filterlab errors into `io::Error`s (a frame's payload seen as a
/// [`Write`]r, a stream cut into chunks) keeps the first one here, and the
/// caller returns it in place of what came back through `std::io`.
#[derive(Debug, Default)]
pub struct ErrorStash(Option<Error>);

impl ErrorStash {
    /// Keeps `err` (unless an earlier one is kept) and returns the
    /// `io::Error` to pass up: an unexpected end for
    /// [`ErrorKind::Truncated`], so that readers that see only the
    /// `io::Error` report truncation as well.
    pub fn keep(&mut self, err: Error) -> io::Error {
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
    pub fn take_or(&mut self, err: Error) -> Error {
        self.0.take().unwrap_or(err)
    }
}

/// A frame's payload as `std::io` sees it, lent by
/// [`FrameWriter::write_nested`] (a [`Write`]r) and
/// [`FrameReader::read_nested`] (a [`Read`]er): bytes go through the frame
/// (counted and checksummed), never past the payload's length.
pub struct Nested<'a, F> {
    frame: &'a mut F,
    stash: ErrorStash,
}

impl<'a, F> Nested<'a, F> {
    /// Runs `work` over `frame`'s payload; the frame's own error in place
    /// of the `io::Error` it became, when there was one.
    fn run<T>(
        frame: &'a mut F,
        work: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut nested = Self {
            frame,
            stash: ErrorStash::default(),
        };
        work(&mut nested).map_err(|err| nested.stash.take_or(err))
    }
}

impl<W: Write> Write for Nested<'_, FrameWriter<W>> {
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

impl<R: Read> Nested<'_, FrameReader<R>> {
    /// Payload bytes not read yet.
    pub fn remaining(&self) -> u64 {
        self.frame.remaining
    }
}

impl<R: Read> Read for Nested<'_, FrameReader<R>> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.frame.remaining == 0 {
            return Err(self.stash.keep(Error::new(
                ErrorKind::LengthMismatch,
                "nested data runs past the end of the payload",
            )));
        }
        let count = buf
            .len()
            .min(usize::try_from(self.frame.remaining).unwrap_or(usize::MAX));
        match self.frame.read_bytes_into(&mut buf[..count]) {
            Ok(()) => Ok(count),
            Err(err) => Err(self.stash.keep(err)),
        }
    }
}

/// A reader that validates a header, streams the payload while checksumming
/// it, and checks the trailing checksum on [`finish`](Self::finish).
pub struct FrameReader<R: Read> {
    inner: R,
    /// None for a payload read alone ([`payload_only`](Self::payload_only)),
    /// which has no checksum to check.
    checksum: Option<Xxh3>,
    remaining: u64,
    header: Header,
}

impl<R: Read> FrameReader<R> {
    /// Reads and validates a header of the given kind.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::BadMagic`], [`ErrorKind::UnsupportedVersion`],
    /// [`ErrorKind::WrongKind`], [`ErrorKind::InvalidHeader`],
    /// [`ErrorKind::ChecksumMismatch`], [`ErrorKind::PayloadTooLarge`] (over
    /// `payload_limit`), [`ErrorKind::Truncated`] or [`ErrorKind::Io`].
    pub fn open(inner: R, kind: FilterKind, payload_limit: u64) -> Result<Self, Error> {
        Self::open_inner(inner, Some(kind), payload_limit)
    }

    /// A reader of `header`'s payload alone, from `inner`: no header before
    /// it, no checksum after it (see [`Persist::read_payload_from`]).
    pub fn payload_only(inner: R, header: Header) -> Self {
        Self {
            inner,
            checksum: None,
            remaining: header.payload_len,
            header,
        }
    }

    /// Reads and validates a header of any kind (to inspect a file).
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open), without the kind check.
    pub fn open_any(inner: R, payload_limit: u64) -> Result<Self, Error> {
        Self::open_inner(inner, None, payload_limit)
    }

    fn open_inner(
        mut inner: R,
        expected_kind: Option<FilterKind>,
        payload_limit: u64,
    ) -> Result<Self, Error> {
        let mut fixed = [0u8; FIXED_HEADER_LEN - 8];
        read_exact(&mut inner, &mut fixed[..8])?;
        if fixed[..8] != MAGIC {
            return Err(Error::new(
                ErrorKind::BadMagic,
                "the input is not a filterlab filter",
            ));
        }
        read_exact(&mut inner, &mut fixed[8..])?;
        let u16_at = |at: usize| u16::from_le_bytes([fixed[at], fixed[at + 1]]);
        let u64_at = |at: usize| u64::from_le_bytes(fixed[at..at + 8].try_into().unwrap_or([0; 8]));
        let version = u16_at(8);
        if version != FORMAT_VERSION {
            return Err(Error::new(
                ErrorKind::UnsupportedVersion,
                format!("format version {version}, this build reads {FORMAT_VERSION}"),
            ));
        }
        let kind_id = u16_at(10);
        let kind = FilterKind::from_id(kind_id);
        if let Some(expected) = expected_kind
            && kind != Some(expected)
        {
            let found = kind.map_or_else(|| format!("unknown kind {kind_id}"), |k| k.to_string());
            return Err(Error::new(
                ErrorKind::WrongKind,
                format!("expected a {expected} filter, found {found}"),
            ));
        }
        let kind = kind.ok_or_else(|| {
            Error::new(
                ErrorKind::WrongKind,
                format!("unknown filter kind {kind_id}"),
            )
        })?;
        let param_count = usize::from(u16_at(14));
        if param_count > MAX_PARAMS {
            return Err(Error::new(
                ErrorKind::InvalidHeader,
                format!("{param_count} parameters, at most {MAX_PARAMS} allowed"),
            ));
        }
        let mut rest = vec![0u8; 8 * param_count + 8];
        read_exact(&mut inner, &mut rest)?;
        let (param_bytes, stored_checksum) = rest.split_at(8 * param_count);
        let mut checksum = Xxh3::new();
        checksum.update(&fixed);
        checksum.update(param_bytes);
        let stored = u64::from_le_bytes(stored_checksum.try_into().unwrap_or([0; 8]));
        if checksum.digest() != stored {
            return Err(Error::new(
                ErrorKind::ChecksumMismatch,
                "header checksum does not match",
            ));
        }
        checksum.update(stored_checksum);
        let params = param_bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect();
        let header = Header {
            kind,
            hasher: KeyHasher::from_parts(u16_at(12), u64_at(16))?,
            items: u64_at(24),
            params,
            payload_len: u64_at(32),
        };
        if header.payload_len > payload_limit {
            return Err(Error::new(
                ErrorKind::PayloadTooLarge,
                format!(
                    "payload of {} bytes exceeds the limit of {payload_limit}",
                    header.payload_len
                ),
            ));
        }
        Ok(Self {
            inner,
            checksum: Some(checksum),
            remaining: header.payload_len,
            header,
        })
    }

    /// The validated header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Payload bytes not read yet.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Runs `read` over the rest of the payload as a [`Read`]er, for files
    /// nested in this one (each read with its own
    /// [`Persist::read_from`]); see [`Nested`]. An error the frame
    /// raised under `read` is returned as it was, not as what passing
    /// through `io::Error` made of it.
    ///
    /// # Errors
    ///
    /// Whatever `read` returns; reading past the payload's end is
    /// [`ErrorKind::LengthMismatch`].
    pub fn read_nested<T>(
        &mut self,
        read: impl FnOnce(&mut Nested<'_, Self>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        Nested::run(self, read)
    }

    /// Reads exactly `buf.len()` payload bytes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] past the payload's end,
    /// [`ErrorKind::Truncated`] or [`ErrorKind::Io`].
    pub fn read_bytes_into(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        if buf.len() as u64 > self.remaining {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                "payload shorter than its parameters imply",
            ));
        }
        read_exact(&mut self.inner, buf)?;
        if let Some(checksum) = &mut self.checksum {
            checksum.update(buf);
        }
        self.remaining -= buf.len() as u64;
        Ok(())
    }

    /// Reads `count` little-endian 64-bit words. Memory grows with the bytes
    /// actually received, never ahead of them by more than doubling, so a
    /// crafted count fails as truncated input instead of allocating.
    ///
    /// # Errors
    ///
    /// As [`read_bytes_into`](Self::read_bytes_into); [`ErrorKind::TooLarge`]
    /// when memory for the words cannot be reserved.
    pub fn read_words(&mut self, count: usize) -> Result<Vec<u64>, Error> {
        if (count as u64).saturating_mul(8) > self.remaining {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                "payload shorter than its parameters imply",
            ));
        }
        let mut words: Vec<u64> = Vec::new();
        let mut chunk = vec![0u8; CHUNK_BYTES];
        while words.len() < count {
            let missing = count - words.len();
            if words.capacity() == words.len() {
                let grow = missing.min(words.capacity().max(CHUNK_BYTES / 8));
                words.try_reserve_exact(grow).map_err(|_| {
                    Error::new(
                        ErrorKind::TooLarge,
                        format!("cannot reserve memory for {count} words"),
                    )
                })?;
            }
            let take = missing.min(CHUNK_BYTES / 8);
            let bytes = &mut chunk[..take * 8];
            self.read_bytes_into(bytes)?;
            words.extend(
                bytes
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
            );
        }
        Ok(words)
    }

    /// Checks the trailing checksum now, once the whole payload is read,
    /// so that a filter can validate its payload's layout after the
    /// checksum has vouched for the bytes: a damaged payload then reports
    /// [`ErrorKind::ChecksumMismatch`], not whatever layout check it trips
    /// first. [`finish`](Self::finish) then has no checksum left to read.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] when payload bytes are left unread;
    /// [`ErrorKind::ChecksumMismatch`], [`ErrorKind::Truncated`] or
    /// [`ErrorKind::Io`].
    pub fn verify_checksum(&mut self) -> Result<(), Error> {
        if self.remaining != 0 {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                format!("{} payload bytes left unread", self.remaining),
            ));
        }
        let Some(checksum) = self.checksum.take() else {
            return Ok(());
        };
        let mut stored = [0u8; 8];
        read_exact(&mut self.inner, &mut stored)?;
        if u64::from_le_bytes(stored) != checksum.digest() {
            return Err(Error::new(
                ErrorKind::ChecksumMismatch,
                "payload checksum does not match",
            ));
        }
        Ok(())
    }

    /// Checks that the whole payload was consumed and that the trailing
    /// checksum matches; returns the inner reader.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] when payload bytes remain unread,
    /// [`ErrorKind::ChecksumMismatch`], [`ErrorKind::Truncated`] or [`ErrorKind::Io`].
    pub fn finish(mut self) -> Result<R, Error> {
        self.verify_checksum()?;
        Ok(self.inner)
    }
}

fn read_exact<R: Read>(reader: &mut R, buf: &mut [u8]) -> Result<(), Error> {
    reader.read_exact(buf).map_err(|err| {
        if err.kind() == io::ErrorKind::UnexpectedEof {
            Error::new(ErrorKind::Truncated, "the input ended inside the filter")
        } else {
            Error::from(err)
        }
    })
}

/// Reading and writing a filter in the shared binary format.
///
/// A filter implements the four hooks (its header, its payload, and the
/// reverse of each); the framing, validation and convenience methods come
/// from here and are the same for every filter.
pub trait Persist: Sized {
    /// The configuration [`read_from_expecting`](Self::read_from_expecting)
    /// compares: everything that changes which bits a key maps to.
    type Config: PartialEq + fmt::Debug;

    /// The kind written in the header.
    const KIND: FilterKind;

    /// This filter's configuration.
    fn config(&self) -> Self::Config;

    /// The header describing this filter (kind, hasher, counter, parameters,
    /// payload length).
    fn header(&self) -> Header;

    /// Writes exactly `header().payload_len` payload bytes.
    ///
    /// # Errors
    ///
    /// Those of the [`FrameWriter`].
    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error>;

    /// Validates a header's parameters (ranges, consistency, payload length)
    /// and returns the configuration they describe.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidHeader`], [`ErrorKind::LengthMismatch`] or
    /// [`ErrorKind::TooLarge`].
    fn config_from_header(header: &Header) -> Result<Self::Config, Error>;

    /// Reads the payload of a filter whose header was validated into `config`.
    ///
    /// # Errors
    ///
    /// Those of the [`FrameReader`], and [`ErrorKind::InvalidHeader`] when the
    /// payload contradicts the header.
    fn read_payload<R: Read>(
        config: Self::Config,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error>;

    /// Writes the filter (streaming: memory stays flat for any size).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] when the writer fails.
    fn write_to<W: Write>(&self, writer: W) -> Result<(), Error> {
        let mut frame = FrameWriter::new(writer, &self.header())?;
        self.write_payload(&mut frame)?;
        frame.finish()?;
        Ok(())
    }

    /// Reads a filter, refusing payloads over [`DEFAULT_PAYLOAD_LIMIT`].
    ///
    /// # Errors
    ///
    /// A typed error for every way the input can be wrong: see [`ErrorKind`].
    fn read_from<R: Read>(reader: R) -> Result<Self, Error> {
        Self::read_from_with_limit(reader, DEFAULT_PAYLOAD_LIMIT)
    }

    /// Reads a filter whose payload is at most `payload_limit` bytes.
    ///
    /// # Errors
    ///
    /// As [`read_from`](Self::read_from); [`ErrorKind::PayloadTooLarge`] over the limit.
    fn read_from_with_limit<R: Read>(reader: R, payload_limit: u64) -> Result<Self, Error> {
        read_filter(reader, payload_limit, None).map(|(filter, _)| filter)
    }

    /// Reads a filter and rejects it, before reading its payload, unless its
    /// configuration equals `expected`: configuration drift is an error, not
    /// a silently wrong answer.
    ///
    /// # Errors
    ///
    /// As [`read_from`](Self::read_from); [`ErrorKind::ConfigMismatch`] when
    /// the configurations differ.
    fn read_from_expecting<R: Read>(reader: R, expected: &Self::Config) -> Result<Self, Error> {
        read_filter(reader, DEFAULT_PAYLOAD_LIMIT, Some(expected)).map(|(filter, _)| filter)
    }

    /// Writes the payload alone: the bytes [`write_to`](Self::write_to)
    /// writes between the header and the checksum. For a store that keeps
    /// the header's fields apart (filterlab-redis keeps a Bloom filter's
    /// payload in Redis strings and its configuration beside them).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] when the writer fails.
    fn write_payload_to<W: Write>(&self, writer: W) -> Result<(), Error> {
        let mut frame = FrameWriter::payload_only(writer, &self.header());
        self.write_payload(&mut frame)?;
        frame.finish()?;
        Ok(())
    }

    /// Reads a filter from its payload alone and the header it was written
    /// with (see [`write_payload_to`](Self::write_payload_to)): every check
    /// of [`read_from`](Self::read_from) but the two checksums, which the
    /// store does not keep.
    ///
    /// # Errors
    ///
    /// As [`read_from`](Self::read_from), without
    /// [`ErrorKind::ChecksumMismatch`]; [`ErrorKind::WrongKind`] for a
    /// header of another kind.
    fn read_payload_from<R: Read>(header: Header, reader: R) -> Result<Self, Error> {
        if header.kind != Self::KIND {
            return Err(Error::new(
                ErrorKind::WrongKind,
                format!("a payload of kind {}, expected {}", header.kind, Self::KIND),
            ));
        }
        let config = Self::config_from_header(&header)?;
        let mut frame = FrameReader::payload_only(reader, header);
        let header = frame.header().clone();
        let filter = Self::read_payload(config, &header, &mut frame)?;
        frame.finish()?;
        Ok(filter)
    }

    /// The filter as bytes.
    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        // Writing to a Vec cannot fail, and `write_payload` writes exactly the
        // length its header announces; an error here is a bug in a filter's hooks.
        if let Err(err) = self.write_to(&mut bytes) {
            unreachable!("serializing into memory failed: {err}");
        }
        bytes
    }

    /// Reads a filter from bytes that hold exactly one filter.
    ///
    /// # Errors
    ///
    /// As [`read_from`](Self::read_from); [`ErrorKind::LengthMismatch`] when
    /// bytes follow the filter.
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (filter, rest) = read_filter(bytes, DEFAULT_PAYLOAD_LIMIT, None)?;
        if rest.is_empty() {
            Ok(filter)
        } else {
            Err(Error::new(
                ErrorKind::LengthMismatch,
                format!("{} bytes follow the filter", rest.len()),
            ))
        }
    }
}

fn read_filter<F: Persist, R: Read>(
    reader: R,
    payload_limit: u64,
    expected: Option<&F::Config>,
) -> Result<(F, R), Error> {
    let mut frame = FrameReader::open(reader, F::KIND, payload_limit)?;
    let header = frame.header().clone();
    let config = F::config_from_header(&header)?;
    if let Some(expected) = expected
        && &config != expected
    {
        return Err(Error::new(
            ErrorKind::ConfigMismatch,
            format!("stored filter is {config:?}, expected {expected:?}"),
        ));
    }
    let filter = F::read_payload(config, &header, &mut frame)?;
    let rest = frame.finish()?;
    Ok((filter, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_header(payload_len: u64) -> Header {
        Header {
            kind: FilterKind::Bloom,
            hasher: KeyHasher::new(0xfeed),
            items: 3,
            params: vec![128, 4],
            payload_len,
        }
    }

    fn framed(words: &[u64]) -> Vec<u8> {
        let mut frame =
            FrameWriter::new(Vec::new(), &sample_header(8 * words.len() as u64)).unwrap();
        frame.write_words(words).unwrap();
        frame.finish().unwrap()
    }

    /// Two framed files nested in an enclosing frame's payload come back
    /// whole; a nested write or read past the payload fails with the
    /// frame's own error kind, not the `io::Error` it passed through.
    #[test]
    fn nested_files_round_trip_and_keep_their_error_kinds() {
        let inner = [framed(&[1, 2]), framed(&[3])];
        let len = inner.iter().map(|file| file.len() as u64).sum();
        let mut outer = FrameWriter::new(Vec::new(), &sample_header(len)).unwrap();
        for file in &inner {
            outer
                .write_nested(|payload| Ok(payload.write_all(file)?))
                .unwrap();
        }
        let err = outer
            .write_nested(|payload| Ok(payload.write_all(&[0])?))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LengthMismatch);
        let bytes = outer.finish().unwrap();

        let mut frame = FrameReader::open(&bytes[..], FilterKind::Bloom, 1 << 20).unwrap();
        for (file, count) in inner.iter().zip([2, 1]) {
            let words = frame
                .read_nested(|payload| {
                    let mut nested = FrameReader::open(payload, FilterKind::Bloom, 1 << 20)?;
                    let words = nested.read_words(count)?;
                    nested.finish()?;
                    Ok(words)
                })
                .unwrap();
            assert_eq!(words.len(), count, "{file:?}");
        }
        assert_eq!(frame.remaining(), 0);
        let err = frame
            .read_nested(|payload| FrameReader::open(payload, FilterKind::Bloom, 1 << 20).map(drop))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LengthMismatch);
        frame.finish().unwrap();
    }

    fn read_back(bytes: &[u8], count: usize) -> Result<Vec<u64>, Error> {
        let mut frame = FrameReader::open(bytes, FilterKind::Bloom, 1 << 20)?;
        let words = frame.read_words(count)?;
        frame.finish()?;
        Ok(words)
    }

    #[test]
    fn round_trip_and_layout() {
        let words = [1u64, u64::MAX, 0x0102_0304_0506_0708];
        let bytes = framed(&words);
        assert_eq!(bytes.len(), FIXED_HEADER_LEN + 16 + 24 + 8);
        assert_eq!(&bytes[..8], b"FLTRLAB\0");
        assert_eq!(&bytes[8..10], &[1, 0]);
        assert_eq!(
            bytes[FIXED_HEADER_LEN + 16 + 16],
            0x08,
            "little-endian payload"
        );
        assert_eq!(read_back(&bytes, 3).unwrap(), words);
        let frame = FrameReader::open_any(&bytes[..], u64::MAX).unwrap();
        assert_eq!(frame.header(), &sample_header(24));
    }

    #[test]
    fn every_corruption_is_a_typed_error() {
        let bytes = framed(&[7, 8, 9, 10]);
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut corrupt = bytes.clone();
                corrupt[at] ^= 1 << bit;
                assert!(
                    read_back(&corrupt, 4).is_err(),
                    "flip at byte {at} bit {bit}"
                );
            }
        }
        for len in 0..bytes.len() {
            let err = read_back(&bytes[..len], 4).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Truncated, "truncated to {len}");
        }
    }

    #[test]
    fn wrong_kind_version_magic() {
        let bytes = framed(&[1]);
        let err = FrameReader::open(&bytes[..], FilterKind::Cuckoo, 1 << 20)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::WrongKind);
        let mut other = bytes.clone();
        other[8] = 2;
        let err = FrameReader::open(&other[..], FilterKind::Bloom, 1 << 20)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::UnsupportedVersion);
        other = bytes.clone();
        other[0] = b'X';
        let err = FrameReader::open(&other[..], FilterKind::Bloom, 1 << 20)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::BadMagic);
    }

    #[test]
    fn crafted_length_neither_allocates_nor_passes() {
        // A valid header claiming a 2^40-byte payload followed by 16 bytes.
        let header = sample_header(1 << 40);
        let mut bytes = header.encode();
        bytes.extend_from_slice(&[0u8; 16]);
        let err = FrameReader::open(&bytes[..], FilterKind::Bloom, 1 << 20)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::PayloadTooLarge);
        // With no limit, reading the claimed words fails as truncated after
        // reserving only one chunk (this would abort on allocation otherwise).
        let mut frame = FrameReader::open(&bytes[..], FilterKind::Bloom, u64::MAX).unwrap();
        let err = frame.read_words(1 << 37).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Truncated);
    }

    #[test]
    fn unread_payload_and_overlong_writes_are_errors() {
        let bytes = framed(&[1, 2]);
        assert_eq!(
            read_back(&bytes, 1).unwrap_err().kind(),
            ErrorKind::LengthMismatch
        );
        assert_eq!(
            read_back(&bytes, 3).unwrap_err().kind(),
            ErrorKind::LengthMismatch
        );
        let mut frame = FrameWriter::new(Vec::new(), &sample_header(8)).unwrap();
        assert_eq!(
            frame.write_words(&[1, 2]).unwrap_err().kind(),
            ErrorKind::LengthMismatch
        );
        let frame = FrameWriter::new(Vec::new(), &sample_header(8)).unwrap();
        assert_eq!(
            frame.finish().unwrap_err().kind(),
            ErrorKind::LengthMismatch
        );
    }

    #[test]
    fn kind_ids_are_unique_and_stable() {
        let ids: Vec<u16> = FilterKind::ALL.iter().map(|k| k.id()).collect();
        assert_eq!(
            ids,
            [1, 2, 3, 4, 5, 6, 7, 8, 9],
            "kind ids are part of the format"
        );
        for kind in FilterKind::ALL {
            assert_eq!(FilterKind::from_id(kind.id()), Some(kind));
        }
        assert_eq!(FilterKind::from_id(0), None);
    }

    #[test]
    fn too_many_params_rejected() {
        let mut header = sample_header(0);
        header.params = vec![0; MAX_PARAMS + 1];
        assert!(FrameWriter::new(Vec::new(), &header).is_err());
    }
}
