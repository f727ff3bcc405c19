//! Export into a local `filterlab_bloom::BloomFilter` and import from one,
//! bit-identical, streamed in bounded chunks through filterlab-bloom's
//! public binary format (kind 1): the Redis strings hold that format's
//! payload byte for byte (see `layout::redis_offset`), so both directions
//! copy bytes (GETRANGE, SETRANGE) and hand them to `Persist`'s payload-only
//! reader and writer, the header's fields coming from the stored layout.

use std::io::{self, Read, Write};
use std::process;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use filterlab_bloom::BloomFilter;
use filterlab_core::format::Header;
use filterlab_core::{ErrorKind as CoreKind, FilterKind, Membership, Persist, mix64};

use crate::endpoint::Endpoint;
use crate::error::{Error, ErrorKind};
use crate::filter::RedisBloomFilter;
use crate::layout::{DEFAULT_PART_BITS, Layout, check_name};
use crate::link::Link;
use crate::scripts::{Call, UPLOAD_SCRIPT};
use crate::target::Target;

/// Bytes per GETRANGE or SETRANGE call of an export or import: 1 MiB, the
/// memory either holds beside the local filter.
pub const TRANSFER_CHUNK_BYTES: u64 = 1 << 20;

/// How long an import's uploaded parts live without a new chunk: a client
/// that dies mid-import leaves no key behind for longer.
const UPLOAD_TTL_MS: u64 = 10 * 60 * 1000;

impl RedisBloomFilter {
    /// Copies the filter into a local [`BloomFilter`] that answers every
    /// lookup exactly as this one does: the same bits, hashes, seed, sizing
    /// and counter, the bits read in chunks of [`TRANSFER_CHUNK_BYTES`].
    ///
    /// Each chunk is read atomically, the whole copy is not: keys inserted
    /// by others during an export may be partly copied. Every key inserted
    /// before the export began is in the copy. The counter is read first,
    /// so it never exceeds the bits copied.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains); `Filter(TooLarge)` when the local
    /// array cannot be allocated.
    pub fn export(&mut self) -> Result<BloomFilter, Error> {
        export(&mut self.link, &self.target)
    }

    /// Creates the filter `name` in Redis from a local filter: the same bits,
    /// hashes, seed, sizing and counter, so that it answers exactly as
    /// `filter` does. The bits are uploaded in chunks of
    /// [`TRANSFER_CHUNK_BYTES`] (all-zero chunks skipped) to temporary keys
    /// of the same hash tag that expire unless refreshed, then published with
    /// the configuration in one script: the filter appears whole or not at
    /// all, and a failed import leaves nothing for longer than ten minutes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AlreadyExists`] when a key of the name exists,
    /// `Filter(InvalidParameter)` for a bad name, [`ErrorKind::Connection`].
    pub fn import(
        endpoint: &(impl Into<Endpoint> + Clone),
        name: &str,
        filter: &BloomFilter,
    ) -> Result<Self, Error> {
        Self::import_in_parts(endpoint, name, filter, DEFAULT_PART_BITS)
    }

    /// [`import`](Self::import) into string keys of `part_bits` bits each
    /// (see [`RedisBloomBuilder::part_bits`](crate::RedisBloomBuilder::part_bits)).
    ///
    /// # Errors
    ///
    /// As [`import`](Self::import); `Filter(InvalidParameter)` for a bad
    /// `part_bits`, `Filter(TooLarge)` beyond [`MAX_PARTS`](crate::MAX_PARTS).
    pub fn import_in_parts(
        endpoint: &(impl Into<Endpoint> + Clone),
        name: &str,
        filter: &BloomFilter,
        part_bits: u64,
    ) -> Result<Self, Error> {
        check_name(name)?;
        let capacity = filter.capacity().map_or(0, |capacity| capacity as u64);
        let layout = Layout::new(filter.config(), part_bits, capacity, filter.target_fpp())?;
        let mut target = Self::with_layout(Link::new(endpoint), name, layout);
        import(&mut target.link, &target.target, filter)?;
        Ok(target)
    }
}

/// Copies `target` into a local [`BloomFilter`]: the counter first (so it
/// never exceeds the bits copied), then the bits in chunks of
/// [`TRANSFER_CHUNK_BYTES`], each read with the configuration check.
pub(crate) fn export(link: &mut Link, target: &Target) -> Result<BloomFilter, Error> {
    let items = target.read(link, false)?.items;
    let header = bloom_header(target.layout, items);
    let mut reader = ExportReader {
        link,
        target,
        chunk: Vec::new(),
        at: 0,
        next: 0,
        error: None,
    };
    let read = BloomFilter::read_payload_from(header, &mut reader);
    read.map_err(|err| reader.error.take().unwrap_or_else(|| err.into()))
}

/// The header of filterlab-bloom's format (kind 1) for a filter of
/// `layout` holding `items`: what the payload in Redis is the rest of.
pub(crate) fn bloom_header(layout: Layout, items: u64) -> Header {
    Header {
        kind: FilterKind::Bloom,
        hasher: layout.bloom.hasher,
        items,
        params: vec![
            layout.bloom.num_bits,
            u64::from(layout.bloom.num_hashes),
            layout.capacity,
            layout.target_fpp.map_or(0, f64::to_bits),
        ],
        payload_len: layout.total_bytes(),
    }
}

/// Creates `target` from `filter` (same configuration): uploads the bits to
/// temporary keys of the target's hash tag, then publishes them with the
/// configuration and counter in one script of the target's family. On
/// failure the uploads are deleted (they expire anyway).
pub(crate) fn import(link: &mut Link, target: &Target, filter: &BloomFilter) -> Result<(), Error> {
    let layout = target.layout;
    let token = upload_token();
    let uploads: Vec<String> = (0..layout.parts())
        .map(|part| format!("{{{}}}:import:{token:016x}:{part}", target.tag))
        .collect();
    let result = upload(link, layout, &uploads, filter).and_then(|()| {
        let mut call = Call::new(
            &target.scripts.import,
            &[target.keys.clone(), uploads.clone()].concat(),
        );
        call.arg(&target.checked[..])
            .arg(&layout.sizing_values()[..])
            .arg(filter.len() as u64);
        link.run(|con| call.invoke::<u64>(con))
    });
    if let Err(err) = result {
        // Best effort: the uploads expire anyway.
        let _ = link.run(|con| redis::cmd("DEL").arg(&uploads).query::<u64>(con));
        return Err(err);
    }
    Ok(())
}

/// The payload of a filter in Redis as a reader: chunks fetched from the
/// server on demand.
struct ExportReader<'a> {
    link: &'a mut Link,
    target: &'a Target,
    /// The chunk being read, and how much of it is read.
    chunk: Vec<u8>,
    at: usize,
    /// The next payload byte to fetch.
    next: u64,
    /// The typed error behind a failed read.
    error: Option<Error>,
}

impl ExportReader<'_> {
    /// Fetches the next chunk; false at the end of the payload.
    fn refill(&mut self) -> Result<bool, Error> {
        let layout = self.target.layout;
        if self.next == layout.total_bytes() {
            return Ok(false);
        }
        let part = self.next / layout.part_bytes();
        let start = self.next - part * layout.part_bytes();
        let end = (start + TRANSFER_CHUNK_BYTES).min(layout.part_len(part));
        let mut call = self.target.call(&self.target.scripts.range);
        call.arg(part).arg(start).arg(end - 1);
        let bytes: Vec<u8> = self.link.run(|con| call.invoke(con))?;
        if bytes.len() as u64 != end - start {
            return Err(Error::new(
                ErrorKind::Damaged,
                format!(
                    "part {part} gave {} bytes at {start}, not {}",
                    bytes.len(),
                    end - start
                ),
            ));
        }
        self.chunk = bytes;
        self.at = 0;
        self.next += end - start;
        Ok(true)
    }
}

impl Read for ExportReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.chunk.len() {
            match self.refill() {
                Ok(true) => {}
                Ok(false) => return Ok(0),
                Err(err) => return Err(keep(&mut self.error, err)),
            }
        }
        let available = &self.chunk[self.at..];
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.at += n;
        Ok(n)
    }
}

/// Streams `filter`'s kind-1 bytes into the upload keys.
fn upload(
    link: &mut Link,
    layout: Layout,
    uploads: &[String],
    filter: &BloomFilter,
) -> Result<(), Error> {
    // Each upload allocated in full (zeroed), with its time to live.
    for (part, key) in (0..).zip(uploads) {
        write_upload(link, key, layout.part_len(part) - 1, &[0])?;
    }
    let mut writer = ImportWriter {
        link,
        layout,
        uploads,
        chunk: Vec::new(),
        chunk_start: 0,
        error: None,
    };
    if let Err(err) = filter.write_payload_to(&mut writer) {
        return Err(writer.error.take().unwrap_or_else(|| err.into()));
    }
    if writer.chunk_start != layout.total_bytes() {
        return Err(Error::filter(
            CoreKind::LengthMismatch,
            format!(
                "the filter wrote {} payload bytes of {}",
                writer.chunk_start,
                layout.total_bytes()
            ),
        ));
    }
    Ok(())
}

/// Receives a kind-1 payload and sends it to the uploads chunk by chunk.
struct ImportWriter<'a> {
    link: &'a mut Link,
    layout: Layout,
    uploads: &'a [String],
    /// Payload bytes not sent yet, starting at payload offset `chunk_start`.
    chunk: Vec<u8>,
    chunk_start: u64,
    /// The typed error behind a failed write.
    error: Option<Error>,
}

impl ImportWriter<'_> {
    /// Buffers payload bytes, sending each chunk when it is full or reaches
    /// the end of its part.
    fn push_payload(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        let layout = self.layout;
        while !bytes.is_empty() {
            let part = self.chunk_start / layout.part_bytes();
            let part_end = part * layout.part_bytes() + layout.part_len(part);
            let chunk_end = (self.chunk_start + TRANSFER_CHUNK_BYTES).min(part_end);
            let filled = self.chunk_start + self.chunk.len() as u64;
            let take = (chunk_end - filled).min(bytes.len() as u64) as usize;
            self.chunk.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.chunk_start + self.chunk.len() as u64 == chunk_end {
                self.send_chunk(part)?;
            }
        }
        Ok(())
    }

    /// Writes the buffered chunk of `part` (unless all zero) and refreshes
    /// the upload's time to live, atomically.
    fn send_chunk(&mut self, part: u64) -> Result<(), Error> {
        if self.chunk.iter().any(|&byte| byte != 0) {
            let key = &self.uploads[part as usize];
            let offset = self.chunk_start - part * self.layout.part_bytes();
            write_upload(self.link, key, offset, &self.chunk)?;
        }
        self.chunk_start += self.chunk.len() as u64;
        self.chunk.clear();
        Ok(())
    }
}

impl Write for ImportWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self.push_payload(bytes) {
            Ok(()) => Ok(bytes.len()),
            Err(err) => Err(keep(&mut self.error, err)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Keeps a transfer's typed error in `slot` and returns the `io::Error` that
/// carries its message through `std::io` (the caller returns the kept one).
fn keep(slot: &mut Option<Error>, err: Error) -> io::Error {
    let io = io::Error::other(err.to_string());
    *slot = Some(err);
    io
}

/// Writes `bytes` at `offset` of an upload key and sets its time to live,
/// in one script (the first write creates it zeroed up to `offset`).
fn write_upload(link: &mut Link, key: &str, offset: u64, bytes: &[u8]) -> Result<(), Error> {
    let mut call = Call::new(&UPLOAD_SCRIPT, &[key.to_owned()]);
    call.arg(offset).arg(bytes).arg(UPLOAD_TTL_MS);
    link.run(|con| call.invoke::<u64>(con)).map(drop)
}

/// A token no other import of the same name uses at the same time.
fn upload_token() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    mix64(nanos ^ mix64(u64::from(process::id()) ^ mix64(count)))
}
