//! CF.*: the data type, a `CuckooFilter` with the counters and settings
//! RedisBloom's CF.INFO reports, and (with the `server` feature) its
//! commands.

#[cfg(feature = "server")]
pub(crate) mod commands;

use std::io::{Read, Write};

use filterlab_core::{Error, Filter, FilterKind, KeyHasher, Membership, RemovableFilter};
use filterlab_cuckoo::{CuckooBuilder, CuckooFilter};

use crate::grammar::CuckooParams;
use crate::options::Options;
use crate::stored::FilterValue;

/// A CF key's filter: the cuckoo filter, the deletions counted, and the
/// bucket size asked for (reported by CF.INFO; the filter's buckets always
/// have four slots).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cuckoo {
    filter: CuckooFilter,
    deletes: u64,
    bucket_size: u64,
}

/// Why an insert was refused (the filter is unchanged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The filter does not grow, and has no slot within its kicks.
    Full,
    /// The filter has all the sub-filters it may have, the newest full.
    MaxExpansions,
}

/// The builder of a filter of `params` under `options`.
fn builder(params: &CuckooParams, options: &Options) -> CuckooBuilder {
    let builder = CuckooFilter::with_fpp(options.cf_error_rate)
        .expected_items(params.capacity)
        .max_kicks(params.max_iterations);
    if params.expansion == 0 || options.cf_max_expansions < 2 {
        builder
    } else {
        builder
            .expansion(params.expansion)
            .max_tables(options.cf_max_expansions as u32)
    }
}

impl Cuckoo {
    /// Bytes the filter of `params` allocates when created.
    ///
    /// # Errors
    ///
    /// Those of the builder.
    pub fn sizing(params: &CuckooParams, options: &Options) -> Result<u64, Error> {
        Ok(builder(params, options).sizing()?.bytes)
    }

    /// An empty filter of `params`, sized for the module's target FPP.
    ///
    /// # Errors
    ///
    /// Those of the builder.
    pub fn create(params: &CuckooParams, options: &Options) -> Result<Self, Error> {
        Ok(Self {
            filter: builder(params, options).build()?,
            deletes: 0,
            bucket_size: u64::from(params.bucket_size),
        })
    }

    /// The filter's key hasher: items hash over their bytes.
    pub fn hasher(&self) -> KeyHasher {
        *self.filter.hasher()
    }

    /// An item's hash, with the filter's own hasher, over its bytes.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> u64 {
        self.filter.hasher().hash_bytes(item)
    }

    fn refusal(&self) -> Refused {
        match self.filter.growth() {
            Some(growth) if self.filter.tables() >= growth.max_tables as usize => {
                Refused::MaxExpansions
            }
            _ => Refused::Full,
        }
    }

    /// Adds a copy of a pre-hashed item (CF.ADD: a present item gets
    /// another copy).
    ///
    /// # Errors
    ///
    /// When the filter cannot take it.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> Result<(), Refused> {
        match self.filter.insert_hash(hash) {
            Ok(_) => Ok(()),
            Err(_) => Err(self.refusal()),
        }
    }

    /// Adds an item only when it is not reported present (CF.ADDNX);
    /// whether it was added.
    ///
    /// # Errors
    ///
    /// When the filter cannot take it.
    pub fn insert_unique(&mut self, item: &[u8]) -> Result<bool, Refused> {
        match self.filter.insert_unique(item) {
            Ok(added) => Ok(added),
            Err(_) => Err(self.refusal()),
        }
    }

    /// Whether a pre-hashed item may be present.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.filter.contains_hash(hash)
    }

    /// Looks a batch of pre-hashed items up, prefetching both buckets of
    /// the items ahead in a large filter.
    pub fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        self.filter.contains_hashes(hashes, found);
    }

    /// How many copies of an item the filter may hold (CF.COUNT).
    pub fn count(&self, item: &[u8]) -> u64 {
        self.filter.count(item) as u64
    }

    /// Removes one copy of a pre-hashed item (CF.DEL); whether one was there.
    pub fn remove_hash(&mut self, hash: u64) -> bool {
        let removed = self.filter.remove_hash(hash).unwrap_or(false);
        self.deletes += u64::from(removed);
        removed
    }

    /// Items held: inserts minus removals.
    pub fn len(&self) -> u64 {
        self.filter.len() as u64
    }

    /// Whether the filter holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// CF.INFO's fields, in its order. Size is the bytes of the tables
    /// (and of the copies kept beside them): what the filter is, whatever
    /// its history (MEMORY USAGE adds the allocator's rounding).
    pub fn info(&self) -> [(&'static str, i64); 8] {
        let clamp = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        let filter = &self.filter;
        [
            ("Size", clamp(self.storage_bytes() as u64)),
            ("Number of buckets", clamp(filter.buckets())),
            ("Number of filters", clamp(filter.tables() as u64)),
            ("Number of items inserted", clamp(self.len())),
            ("Number of items deleted", clamp(self.deletes)),
            ("Bucket size", clamp(self.bucket_size)),
            (
                "Expansion rate",
                filter
                    .growth()
                    .map_or(0, |growth| i64::from(growth.expansion)),
            ),
            ("Max iterations", i64::from(filter.max_kicks())),
        ]
    }

    /// CF.DEBUG's line: RedisBloom's fields, with the filter's own layout
    /// (slots per bucket, fingerprint bits of each sub-filter).
    pub fn debug(&self) -> String {
        let filter = &self.filter;
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{} \
             slots:{} fingerprint_bits:{:?} load:{:.4}",
            self.bucket_size,
            filter.buckets(),
            self.len(),
            self.deletes,
            filter.tables(),
            filter.max_kicks(),
            filter.growth().map_or(0, |growth| growth.expansion),
            filter.slots_per_bucket(),
            filter.table_fingerprint_bits(),
            filter.load_factor()
        )
    }
}

/// Bytes of the fields written before the filter in a stream.
const FIELDS: usize = 16;

impl FilterValue for Cuckoo {
    const KIND: FilterKind = FilterKind::Cuckoo;

    /// The deletion counter and the bucket size (little-endian u64s), then
    /// the cuckoo filter's format.
    fn write_stream(&self, out: &mut dyn Write) -> Result<(), Error> {
        let mut fields = [0u8; FIELDS];
        fields[..8].copy_from_slice(&self.deletes.to_le_bytes());
        fields[8..].copy_from_slice(&self.bucket_size.to_le_bytes());
        out.write_all(&fields)?;
        self.filter.write_to(out)
    }

    fn read_stream(input: &mut dyn Read) -> Result<Self, Error> {
        let mut fields = [0u8; FIELDS];
        input.read_exact(&mut fields)?;
        let field = |at: usize| u64::from_le_bytes(fields[at..at + 8].try_into().unwrap_or([0; 8]));
        Ok(Self {
            deletes: field(0),
            bucket_size: field(8),
            filter: CuckooFilter::read_from(input)?,
        })
    }

    fn storage_bytes(&self) -> usize {
        self.filter.memory_usage()
    }

    /// RedisBloom's CF.SCANDUMP replies `[0, nil]` for a filter without items.
    fn dumps_nothing(&self) -> bool {
        self.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Recorded;
    use crate::stored::{Stored, dump_all, load_chunks};

    #[test]
    fn a_filter_with_its_counters_saves_loads_and_dumps() {
        let options = Options::default();
        let params = CuckooParams::defaults(&options, 100);
        let mut cuckoo = Cuckoo::create(&params, &options).unwrap();
        for i in 0..1000u32 {
            let hash = cuckoo.hash(&i.to_le_bytes());
            cuckoo.insert_hash(hash).unwrap();
        }
        assert!(cuckoo.filter.tables() > 1);
        assert!(cuckoo.remove_hash(cuckoo.hash(&7u32.to_le_bytes())));
        assert_eq!((cuckoo.len(), cuckoo.deletes), (999, 1));
        let mut saved = Recorded::default();
        Stored::Ready(cuckoo.clone()).save(&mut saved).unwrap();
        assert_eq!(
            Stored::<Cuckoo>::load(&mut saved, 1).unwrap().ready(),
            Some(&cuckoo)
        );
        let mut chunks = Vec::new();
        dump_all(&cuckoo, |cursor, chunk| {
            chunks.push((cursor, chunk.to_vec()));
            Ok(())
        })
        .unwrap();
        let chunks = chunks
            .iter()
            .map(|(cursor, chunk)| (*cursor, chunk.as_slice()));
        let key = load_chunks(chunks).unwrap().unwrap();
        assert_eq!(key.ready(), Some(&cuckoo));
        assert_eq!(cuckoo.info()[4], ("Number of items deleted", 1));
    }

    #[test]
    fn a_filter_that_does_not_grow_says_full_and_one_at_its_caps_says_so() {
        let options = Options::default();
        let fixed = CuckooParams {
            expansion: 0,
            ..CuckooParams::defaults(&options, 4)
        };
        let mut cuckoo = Cuckoo::create(&fixed, &options).unwrap();
        let refused =
            (0..100u32).find_map(|i| cuckoo.insert_hash(cuckoo.hash(&i.to_le_bytes())).err());
        assert_eq!(refused, Some(Refused::Full));
        let options = Options {
            cf_max_expansions: 2,
            ..Options::default()
        };
        let mut cuckoo = Cuckoo::create(&CuckooParams::defaults(&options, 4), &options).unwrap();
        let refused =
            (0..1000u32).find_map(|i| cuckoo.insert_hash(cuckoo.hash(&i.to_le_bytes())).err());
        assert_eq!(refused, Some(Refused::MaxExpansions));
    }
}
