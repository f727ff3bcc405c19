//! BF.*: the data type, a `ScalableBloomFilter` with the layers the module
//! was loaded with, and (with the `server` feature) its commands.

#[cfg(feature = "server")]
pub(crate) mod commands;

use std::io::{Read, Write};

use filterlab_core::format::{DEFAULT_PAYLOAD_LIMIT, FrameReader};
use filterlab_core::{Error, ErrorKind, Filter, FilterKind, KeyHasher, Membership, Persist};
use filterlab_scalable::{
    BlockedBloomFilter, BloomFilter, Layer, ScalableBloomBuilder, ScalableBloomFilter,
};

use crate::grammar::{BloomField, BloomParams};
use crate::options::Layout;
use crate::stored::FilterValue;

/// A BF key's filter.
#[derive(Clone, Debug, PartialEq)]
pub enum Bloom {
    /// Blocked layers (one cache line per key and layer).
    Blocked(ScalableBloomFilter<BlockedBloomFilter>),
    /// Standard layers (the fewest bits).
    Standard(ScalableBloomFilter<BloomFilter>),
}

/// Runs `$body` with `$filter` bound to the scalable filter, whatever its
/// layers: one generic body, two instantiations.
macro_rules! each_layout {
    ($bloom:expr, $filter:ident => $body:expr) => {
        match $bloom {
            Bloom::Blocked($filter) => $body,
            Bloom::Standard($filter) => $body,
        }
    };
}

/// What an insert did with a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// The key was not reported present: added, counted (BF.ADD's 1).
    New,
    /// A layer reported it present: nothing changed (BF.ADD's 0).
    Present,
    /// A non-scaling filter holds its capacity: refused, unchanged.
    NonScalingFull,
    /// A scaling filter at its caps (64 layers, or its memory cap):
    /// refused, unchanged.
    Full,
}

/// Layers at least this large are probed with their batched, prefetching
/// lookup before a batch of inserts (as the filter's own batched lookup
/// decides, see `filterlab-scalable`): smaller ones are in cache.
const PREFETCH_BYTES: usize = 1 << 20;

/// The builder of a filter of `params` with `L` layers.
fn builder<L: Layer>(params: &BloomParams) -> ScalableBloomBuilder<L> {
    let builder = ScalableBloomBuilder::<L>::new(params.error_rate)
        .initial_capacity(params.capacity)
        .growth(params.expansion)
        .tightening(params.tightening)
        .non_scaling(params.non_scaling);
    match params.first_share {
        Some(share) => builder.first_layer_share(share),
        None => builder,
    }
}

impl Bloom {
    /// Bytes the filter of `params` allocates when created, computed
    /// without allocating.
    ///
    /// # Errors
    ///
    /// Those of the builder (`TooLarge` past its memory cap).
    pub fn sizing(params: &BloomParams, layout: Layout) -> Result<u64, Error> {
        let sizing = match layout {
            Layout::Blocked => builder::<BlockedBloomFilter>(params).sizing()?,
            Layout::Standard => builder::<BloomFilter>(params).sizing()?,
        };
        Ok(sizing.bytes)
    }

    /// An empty filter of `params`.
    ///
    /// # Errors
    ///
    /// Those of the builder: the parameters were checked by the grammar,
    /// so only `TooLarge` (past the memory cap, or refused by the
    /// allocator).
    pub fn create(params: &BloomParams, layout: Layout) -> Result<Self, Error> {
        Ok(match layout {
            Layout::Blocked => Self::Blocked(builder(params).build()?),
            Layout::Standard => Self::Standard(builder(params).build()?),
        })
    }

    /// The filter's key hasher: items hash over their bytes.
    pub fn hasher(&self) -> KeyHasher {
        each_layout!(self, filter => *filter.hasher())
    }

    /// An item's hash, with the filter's own hasher, over its bytes.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> u64 {
        each_layout!(self, filter => filter.hasher().hash_bytes(item))
    }

    /// Adds one pre-hashed item.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> Added {
        each_layout!(self, filter => {
            let non_scaling = filter.config().non_scaling;
            match filter.insert_hash(hash) {
                Ok(true) => Added::New,
                Ok(false) => Added::Present,
                Err(_) if non_scaling => Added::NonScalingFull,
                Err(_) => Added::Full,
            }
        })
    }

    /// Adds a batch of pre-hashed items (at most [`filterlab_core::BATCH`]),
    /// one answer each: the large layers are first probed for the whole
    /// batch with their prefetching batched lookup, so that the inserts
    /// after it find their cache lines loaded. Stops after a
    /// [`Added::NonScalingFull`] (as RedisBloom does); returns how many
    /// were answered.
    pub fn insert_batch(&mut self, hashes: &[u64], answers: &mut [Added]) -> usize {
        let mut present = [false; filterlab_core::BATCH];
        let count = hashes.len().min(answers.len()).min(present.len());
        if self.storage_bytes() >= PREFETCH_BYTES {
            self.contains_hashes(&hashes[..count], &mut present[..count]);
        }
        for index in 0..count {
            let answer = if present[index] {
                Added::Present
            } else {
                self.insert_hash(hashes[index])
            };
            answers[index] = answer;
            if answer == Added::NonScalingFull {
                return index + 1;
            }
        }
        count
    }

    /// Whether a pre-hashed item may be present.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        each_layout!(self, filter => filter.contains_hash(hash))
    }

    /// Looks a batch of pre-hashed items up: the filter's batched lookup,
    /// which prefetches in the large layers.
    pub fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        each_layout!(self, filter => filter.contains_hashes(hashes, found));
    }

    /// Items counted as inserted (BF.CARD).
    pub fn len(&self) -> u64 {
        each_layout!(self, filter => filter.len() as u64)
    }

    /// Whether no item was counted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A BF.INFO field; `None` is nil (the expansion of a non-scaling
    /// filter). Size is the bytes of the layers' arrays: what the filter
    /// is, whatever its history (MEMORY USAGE adds the allocator's
    /// rounding and the bookkeeping, which depend on it).
    pub fn field(&self, field: BloomField) -> Option<i64> {
        let clamp = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        each_layout!(self, filter => match field {
            BloomField::Capacity => Some(clamp(filter.current_capacity())),
            BloomField::Size => Some(clamp(self.storage_bytes() as u64)),
            BloomField::Filters => Some(clamp(filter.layers().len() as u64)),
            BloomField::Items => Some(clamp(filter.len() as u64)),
            BloomField::Expansion => {
                let config = filter.config();
                (!config.non_scaling).then(|| clamp(config.growth))
            }
        })
    }

    /// BF.DEBUG's lines: the count, then one line per layer.
    pub fn debug(&self) -> Vec<String> {
        each_layout!(self, filter => {
            let info = filter.info();
            let mut lines = vec![format!("size:{}", info.items)];
            lines.extend(info.layers.iter().map(|layer| {
                format!(
                    "bytes:{} bits:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{} layout:{}",
                    layer.bytes,
                    layer.bits,
                    layer.hashes,
                    layer.capacity,
                    layer.items,
                    Short(layer.fpp_bound),
                    info.layer_type
                )
            }));
            lines
        })
    }

    /// Builds, once, the per-k FPP tables `BlockedBloomFilter`'s sizing
    /// keeps for the whole process (every k, 128 KiB; about 0.1 s): a
    /// table made later would be counted in the bytes of the key whose
    /// command first needed it, and MEMORY USAGE would be off by it.
    pub fn warm_up() {
        for hashes in 1..=filterlab_core::sizing::MAX_HASHES {
            let _ = BlockedBloomFilter::with_fpp(0.01)
                .hashes(hashes)
                .expected_items(1000)
                .sizing();
        }
    }

    /// The layers' kind, for the reader.
    fn read_layers<L: Layer>(
        frame: FrameReader<&mut dyn Read>,
    ) -> Result<ScalableBloomFilter<L>, Error> {
        let mut frame = frame;
        let header = frame.header().clone();
        let config = ScalableBloomFilter::<L>::config_from_header(&header)?;
        let filter = ScalableBloomFilter::<L>::read_payload(config, &header, &mut frame)?;
        frame.finish()?;
        Ok(filter)
    }
}

impl FilterValue for Bloom {
    const KIND: FilterKind = FilterKind::ScalableBloom;

    /// The scalable filter's format alone: a BF dump restores with
    /// `ScalableBloomFilter::restore_chunks` too.
    fn write_stream(&self, out: &mut dyn Write) -> Result<(), Error> {
        each_layout!(self, filter => filter.write_to(out))
    }

    /// Reads the header, then the layers of the kind it names.
    fn read_stream(input: &mut dyn Read) -> Result<Self, Error> {
        let frame = FrameReader::open(input, FilterKind::ScalableBloom, DEFAULT_PAYLOAD_LIMIT)?;
        let layers = frame.header().params.get(5).copied();
        if layers == Some(u64::from(BlockedBloomFilter::KIND.id())) {
            Self::read_layers(frame).map(Self::Blocked)
        } else if layers == Some(u64::from(BloomFilter::KIND.id())) {
            Self::read_layers(frame).map(Self::Standard)
        } else {
            Err(Error::new(
                ErrorKind::WrongKind,
                format!("a scalable filter of layers of kind {layers:?}"),
            ))
        }
    }

    fn storage_bytes(&self) -> usize {
        each_layout!(self, filter => filter.memory_usage())
    }
}

/// A number as C's `%g` writes it (six significant digits, no trailing
/// zeros): RedisBloom's BF.DEBUG ratios.
struct Short(f64);

impl std::fmt::Display for Short {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = self.0;
        let exponent = if value == 0.0 {
            0
        } else {
            value.abs().log10().floor() as i32
        };
        let trim = |text: String| {
            if text.contains('.') {
                text.trim_end_matches('0').trim_end_matches('.').to_owned()
            } else {
                text
            }
        };
        if (-4..6).contains(&exponent) {
            let decimals = (5 - exponent).max(0) as usize;
            f.write_str(&trim(format!("{value:.decimals$}")))
        } else {
            let mantissa = value / 10f64.powi(exponent);
            let sign = if exponent < 0 { '-' } else { '+' };
            write!(
                f,
                "{}e{sign}{:02}",
                trim(format!("{mantissa:.5}")),
                exponent.abs()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;
    use crate::payload::Recorded;
    use crate::stored::{
        ChunkRefusal, Loaded, Stored, dump_after, dump_all, load_chunk, load_chunks,
    };

    fn grown(layout: Layout) -> Bloom {
        let params = BloomParams {
            capacity: 100,
            ..BloomParams::defaults(&Options::default())
        };
        let mut bloom = Bloom::create(&params, layout).unwrap();
        let hashes: Vec<u64> = (0..1000u32).map(|i| bloom.hash(&i.to_le_bytes())).collect();
        let mut answers = [Added::Present; 256];
        for batch in hashes.chunks(256) {
            assert_eq!(bloom.insert_batch(batch, &mut answers), batch.len());
        }
        bloom
    }

    #[test]
    fn ratios_print_as_redisbloom_s() {
        for (value, text) in [
            (0.0005, "0.0005"),
            (0.15 * 0.001, "0.00015"),
            (1.5625e-05, "1.5625e-05"),
            (0.01, "0.01"),
            (0.25, "0.25"),
        ] {
            assert_eq!(Short(value).to_string(), text);
        }
    }

    #[test]
    fn both_layouts_save_load_and_dump() {
        for layout in [Layout::Blocked, Layout::Standard] {
            let bloom = grown(layout);
            assert!(bloom.len() >= 990 && bloom.field(BloomField::Filters) == Some(4));
            let mut saved = Recorded::default();
            Stored::Ready(bloom.clone()).save(&mut saved).unwrap();
            let loaded = Stored::<Bloom>::load(&mut saved, 1).unwrap();
            assert_eq!(loaded.ready(), Some(&bloom));
            // The dump restores chunk by chunk, and has at least two chunks.
            let mut chunks = Vec::new();
            let count = dump_all(&bloom, |cursor, chunk| {
                chunks.push((cursor, chunk.to_vec()));
                Ok(())
            })
            .unwrap();
            assert!(count >= 2);
            assert_eq!(dump_after(&bloom, 0).unwrap().unwrap(), chunks[0]);
            assert_eq!(dump_after(&bloom, count as i64).unwrap(), None);
            assert_eq!(dump_after(&bloom, -1).unwrap(), None);
            let chunks = chunks
                .iter()
                .map(|(cursor, chunk)| (*cursor, chunk.as_slice()));
            let key = load_chunks(chunks).unwrap().unwrap();
            assert_eq!(key.ready(), Some(&bloom));
        }
    }

    #[test]
    fn damaged_payloads_and_chunks_are_refused() {
        let bloom = grown(Layout::Blocked);
        let mut saved = Recorded::default();
        Stored::Ready(bloom.clone()).save(&mut saved).unwrap();
        assert!(Stored::<Bloom>::load(&mut saved.clone(), 2).is_err());
        let crate::payload::Item::Buffer(piece) = &mut saved.items[1] else {
            panic!("{:?}", saved.items[1]);
        };
        piece[100] ^= 0x10;
        let err = Stored::<Bloom>::load(&mut saved, 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ChecksumMismatch);
        let mut chunks = Vec::new();
        dump_all(&bloom, |cursor, chunk| {
            chunks.push((cursor, chunk.to_vec()));
            Ok(())
        })
        .unwrap();
        let mut first = chunks[0].1.clone();
        first[72] ^= 1;
        assert!(matches!(
            load_chunk::<Bloom>(None, 1, &first),
            Err(ChunkRefusal::BadChunk(_))
        ));
        assert!(matches!(
            load_chunk::<Bloom>(None, 2, &chunks[1].1),
            Err(ChunkRefusal::NotFound)
        ));
        let Loaded::Started(mut key) = load_chunk::<Bloom>(None, 1, &chunks[0].1).unwrap() else {
            panic!("one chunk restored a multi-chunk dump");
        };
        assert!(matches!(
            load_chunk(Some(&mut key), 3, &chunks[1].1),
            Err(ChunkRefusal::Offset)
        ));
        assert!(matches!(
            load_chunk(Some(&mut key), 1, &chunks[0].1),
            Err(ChunkRefusal::Exists)
        ));
        // A restore under way saves and loads too.
        let mut saved = Recorded::default();
        key.save(&mut saved).unwrap();
        let Stored::Restoring(pending) = Stored::<Bloom>::load(&mut saved, 1).unwrap() else {
            panic!("a restore under way loaded as a filter");
        };
        assert_eq!(pending.progress(), (1, chunks.len() as u64));
    }
}
