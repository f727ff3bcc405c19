//! Checkpoints: a de-duplicator's partitions and counters in core's framing
//! (kind [`FilterKind::DedupCheckpoint`]), written atomically and read into
//! a new value that replaces the running one only when all of it is valid.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use filterlab_bloom::{BloomConfig, BloomFilter};
use filterlab_core::format::{DEFAULT_PAYLOAD_LIMIT, FrameReader, FrameWriter, Header};
use filterlab_core::{ErrorKind as CoreKind, FilterKind, Persist};

use crate::atomic::AtomicFile;
use crate::dedup::{Counters, Deduplicator};
use crate::error::{Error, ErrorKind};
use crate::partition::PartitionKey;
use crate::settings::SizingMode;

/// The layout version of the checkpoint (header parameter 0).
pub const CHECKPOINT_VERSION: u64 = 1;

/// The header parameters, in order.
const PARAMS: [&str; 14] = [
    "checkpoint version",
    "expected items (N)",
    "target FPP (P, f64 bits)",
    "sizing mode",
    "bits per partition",
    "hashes per key",
    "partition count (0: unpartitioned)",
    "live partitions",
    "checks",
    "unique",
    "duplicate",
    "dropped",
    "faults",
    "evicted",
];

/// The header parameter of the first counter.
const FIRST_COUNTER: usize = 8;

/// The longest partition key a checkpoint may hold.
const MAX_KEY_BYTES: u64 = 1 << 20;

/// Bytes before each partition's key: its tag and its length.
const KEY_PREFIX_BYTES: u64 = 1 + 8;

/// Bytes of a framed filter with this header: the fixed header fields and
/// their checksum (48 bytes), 8 per parameter, the payload, and the trailing
/// checksum, as core's format documents them.
fn framed_len(header: &Header) -> u64 {
    48 + 8 * header.params.len() as u64 + header.payload_len + 8
}

impl Deduplicator {
    /// The checkpoint's header.
    fn checkpoint_header(&self) -> Header {
        let settings = &self.settings;
        let config = &self.sizing.config;
        let payload_len = self
            .partitions
            .iter()
            .map(|(key, filter)| {
                KEY_PREFIX_BYTES + key.to_bytes().len() as u64 + framed_len(&filter.header())
            })
            .sum();
        let mut params = vec![
            CHECKPOINT_VERSION,
            self.expected_items(),
            settings.fpp.to_bits(),
            settings.sizing_mode.id(),
            config.num_bits,
            u64::from(config.num_hashes),
            settings.partition_count.unwrap_or(0),
            self.partitions.len() as u64,
        ];
        params.extend(self.counters.to_array());
        Header {
            kind: FilterKind::DedupCheckpoint,
            hasher: settings.hasher(),
            items: self.partitions.values().map(|f| f.len() as u64).sum(),
            params,
            payload_len,
        }
    }

    /// Writes a checkpoint to `writer`: the header (version, N, P, sizing,
    /// bits, k, partition count, counters), then each partition's key and
    /// filter, lowest key first, then the checksum. See the crate README
    /// for the layout.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Filter`]`(Io)` when the writer fails.
    pub fn write_checkpoint_to<W: Write>(&self, writer: W) -> Result<(), Error> {
        let mut frame = FrameWriter::new(writer, &self.checkpoint_header())?;
        for (key, filter) in &self.partitions {
            let bytes = key.to_bytes();
            frame.write_bytes(&[key.tag()])?;
            frame.write_bytes(&(bytes.len() as u64).to_le_bytes())?;
            frame.write_bytes(&bytes)?;
            frame.write_nested(|payload| filter.write_to(payload))?;
        }
        frame.finish()?;
        Ok(())
    }

    /// Writes a checkpoint to `path` atomically: into a temporary file in
    /// the same directory, synced, then renamed over `path`, and the
    /// directory synced. A crash at any point leaves either the previous
    /// checkpoint or the new one, never a mix.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Filter`]`(Io)` when a file operation fails; the
    /// temporary file is then removed and `path` left as it was.
    pub fn write_checkpoint(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let mut file = AtomicFile::create(path)?;
        let mut buffered = BufWriter::with_capacity(1 << 20, &mut file);
        self.write_checkpoint_to(&mut buffered)
            .map_err(|err| err.context(path.display()))?;
        buffered
            .flush()
            .map_err(|err| Error::from(err).context(path.display()))?;
        drop(buffered);
        file.commit()
    }

    /// Reads a checkpoint from `reader` and, only if all of it is valid and
    /// made for this configuration, replaces the stored keys and counters
    /// with it. On any error the running state is untouched. The reader must
    /// end with the checkpoint: it is read to its end, and a byte after the
    /// trailing checksum makes the whole file damaged.
    ///
    /// The configuration that must match: N, P, the sizing mode (and so the
    /// bits and k), the hasher's seed and the partition count. Search-all
    /// and the alarm thresholds are behaviour, not state: they stay as
    /// configured here.
    ///
    /// # Errors
    ///
    /// As [`ErrorKind::Filter`]: `BadMagic`, `UnsupportedVersion` (another
    /// framing or checkpoint version), `WrongKind`, `InvalidHeader`,
    /// `LengthMismatch` (also for bytes after the checkpoint), `Truncated`,
    /// `ChecksumMismatch`, `ConfigMismatch` (another N, P, sizing, seed or
    /// partition count), `Io`, or `TooLarge` when the memory for the
    /// restored filters cannot be had.
    pub fn read_checkpoint_from<R: Read>(&mut self, reader: R) -> Result<(), Error> {
        let restored = self.restore(reader)?;
        self.adopt(restored);
        Ok(())
    }

    /// Reads the checkpoint at `path`, as
    /// [`read_checkpoint_from`](Self::read_checkpoint_from).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CheckpointMissing`] when there is no file at `path`;
    /// otherwise as [`read_checkpoint_from`](Self::read_checkpoint_from).
    pub fn read_checkpoint(&mut self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|err| {
            if err.kind() == io::ErrorKind::NotFound {
                Error::new(
                    ErrorKind::CheckpointMissing,
                    format!("{}: no such file", path.display()),
                )
            } else {
                Error::from(err).context(path.display())
            }
        })?;
        self.read_checkpoint_from(BufReader::with_capacity(1 << 20, file))
            .map_err(|err| err.context(path.display()))
    }

    /// A new de-duplicator of this configuration holding the checkpoint.
    fn restore<R: Read>(&self, reader: R) -> Result<Self, Error> {
        let mut frame =
            FrameReader::open(reader, FilterKind::DedupCheckpoint, DEFAULT_PAYLOAD_LIMIT)?;
        let header = frame.header().clone();
        self.check_checkpoint_header(&header)?;
        let live = header.param(7, PARAMS[7])?;
        let mut restored = self.empty_like()?;
        let mut previous: Option<PartitionKey> = None;
        for _ in 0..live {
            let key = read_key(&mut frame)?;
            let in_order = previous.as_ref().is_none_or(|before| *before < key);
            let expected_unpartitioned =
                self.settings.partition_count.is_some() || key == Self::unpartitioned_key();
            if !in_order || !expected_unpartitioned {
                return Err(bad_header(format!(
                    "partition key {key} out of order or out of place"
                )));
            }
            let config = &self.sizing.config;
            let filter =
                frame.read_nested(|payload| BloomFilter::read_from_expecting(payload, config))?;
            restored.partitions.insert(key.clone(), filter);
            previous = Some(key);
        }
        if frame.remaining() != 0 {
            return Err(filterlab_core::Error::new(
                CoreKind::LengthMismatch,
                format!(
                    "{} payload bytes follow the last partition",
                    frame.remaining()
                ),
            )
            .into());
        }
        expect_end(frame.finish()?)?;
        restored.counters = counters_from(&header)?;
        let stored: u64 = restored.partitions.values().map(|f| f.len() as u64).sum();
        if stored != header.items {
            return Err(bad_header(format!(
                "the header says {} uniques stored, the partitions hold {stored}",
                header.items
            )));
        }
        Ok(restored)
    }

    /// Checks the header's version and that its configuration is this one's.
    fn check_checkpoint_header(&self, header: &Header) -> Result<(), Error> {
        header.expect_params(PARAMS.len())?;
        let version = header.param(0, PARAMS[0])?;
        if version != CHECKPOINT_VERSION {
            return Err(filterlab_core::Error::new(
                CoreKind::UnsupportedVersion,
                format!("checkpoint version {version}, this build reads {CHECKPOINT_VERSION}"),
            )
            .into());
        }
        let settings = &self.settings;
        let stored_mode = header.param(3, PARAMS[3])?;
        let Some(mode) = SizingMode::from_id(stored_mode) else {
            return Err(bad_header(format!("unknown sizing mode {stored_mode}")));
        };
        let stored_config = BloomConfig {
            num_bits: header.param(4, PARAMS[4])?,
            num_hashes: u32::try_from(header.param(5, PARAMS[5])?).unwrap_or(u32::MAX),
            hasher: header.hasher,
        };
        let stored_partitions = header.param(6, PARAMS[6])?;
        let stored = (
            header.param(1, PARAMS[1])?,
            f64::from_bits(header.param(2, PARAMS[2])?),
            mode,
            stored_partitions,
            stored_config,
        );
        let expected = (
            self.expected_items(),
            settings.fpp,
            settings.sizing_mode,
            settings.partition_count.unwrap_or(0),
            self.sizing.config,
        );
        if stored != expected {
            let describe = |(items, fpp, mode, partitions, config): (
                u64,
                f64,
                SizingMode,
                u64,
                BloomConfig,
            )| {
                format!(
                    "N = {items}, P = {fpp:e}, {mode} sizing, {partitions} partitions, \
                     {} bits, k = {}, seed {}",
                    config.num_bits,
                    config.num_hashes,
                    config.hasher.seed()
                )
            };
            return Err(filterlab_core::Error::new(
                CoreKind::ConfigMismatch,
                format!(
                    "the checkpoint was made for {}; this run is configured for {}",
                    describe(stored),
                    describe(expected)
                ),
            )
            .into());
        }
        let live = header.param(7, PARAMS[7])?;
        if live > stored_partitions.max(1) || (stored_partitions == 0 && live != 1) {
            return Err(bad_header(format!(
                "{live} live partitions for a partition count of {stored_partitions}"
            )));
        }
        Ok(())
    }
}

/// The counters of a checkpoint's header, which must add up.
fn counters_from(header: &Header) -> Result<Counters, Error> {
    let mut counts = [0u64; 6];
    for (offset, count) in counts.iter_mut().enumerate() {
        let index = FIRST_COUNTER + offset;
        *count = header.param(index, PARAMS[index])?;
    }
    Counters::from_array(counts).ok_or_else(|| {
        bad_header(format!(
            "counters (checks, unique, duplicate, dropped, faults, evicted) {counts:?} do not add up"
        ))
    })
}

/// Refuses bytes after the trailing checksum: a checkpoint is the whole
/// file (or stream), and anything after it means the file is not what was
/// written (as `Persist::from_bytes` refuses trailing bytes).
fn expect_end<R: Read>(mut rest: R) -> Result<(), Error> {
    let mut byte = [0u8; 1];
    loop {
        match rest.read(&mut byte) {
            Ok(0) => return Ok(()),
            Ok(_) => {
                return Err(filterlab_core::Error::new(
                    CoreKind::LengthMismatch,
                    "bytes follow after the checkpoint's trailing checksum",
                )
                .into());
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(Error::from(err)),
        }
    }
}

fn bad_header(detail: String) -> Error {
    filterlab_core::Error::new(CoreKind::InvalidHeader, detail).into()
}

/// Reads a partition's tag, length and key from the checkpoint's payload.
fn read_key<R: Read>(frame: &mut FrameReader<R>) -> Result<PartitionKey, Error> {
    let mut prefix = [0u8; KEY_PREFIX_BYTES as usize];
    frame.read_bytes_into(&mut prefix)?;
    let len = u64::from_le_bytes(prefix[1..].try_into().unwrap_or([0xff; 8]));
    if len > MAX_KEY_BYTES {
        return Err(bad_header(format!("a partition key of {len} bytes")));
    }
    let mut bytes = vec![0u8; len as usize];
    frame.read_bytes_into(&mut bytes)?;
    PartitionKey::from_tagged(prefix[0], &bytes)
        .ok_or_else(|| bad_header(format!("partition key with tag {}", prefix[0])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framed_len_matches_the_format() {
        let mut filter = BloomFilter::with_fpp(0.01)
            .expected_items(100)
            .build()
            .unwrap();
        filter.insert("x");
        assert_eq!(framed_len(&filter.header()), filter.to_bytes().len() as u64);
    }
}
