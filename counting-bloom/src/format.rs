//! The binary format (kind 3, both layouts and every width) and serde.

use std::io::{Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::sizing::{SizedFor, hashes_from_header};
use filterlab_core::{Error, ErrorKind, FilterKind, Persist};

use crate::builder::CountingBloomConfig;
use crate::counters::{BLOCK_BYTES, Counters, Width, block_count, blocks_for};
use crate::filter::CountingBloom;
use crate::layout::Layout;

/// Header parameters, in order.
const PARAM_NAMES: [&str; 7] = [
    "num_counters",
    "counter_bits",
    "block_counters",
    "num_hashes",
    "capacity",
    "target_fpp",
    "saturated_counters",
];

fn invalid(detail: String) -> Error {
    Error::new(ErrorKind::InvalidHeader, detail)
}

/// Where the sized-for record starts: parameters 4 (capacity) and 5
/// (target_fpp).
const SIZED_FOR: usize = 4;

impl<L: Layout, const BITS: u32> Persist for CountingBloom<L, BITS> {
    type Config = CountingBloomConfig;
    const KIND: FilterKind = FilterKind::CountingBloom;

    fn config(&self) -> CountingBloomConfig {
        CountingBloom::config(self)
    }

    fn header(&self) -> Header {
        let (config, counters, sized_for, len) = self.parts();
        let [capacity, target_fpp] = sized_for.params();
        Header {
            kind: FilterKind::CountingBloom,
            hasher: config.hasher,
            items: len,
            params: vec![
                config.num_counters,
                u64::from(BITS),
                config.block_counters.map_or(0, u64::from),
                u64::from(config.num_hashes),
                capacity,
                target_fpp,
                self.saturated_counters(),
            ],
            payload_len: (counters.blocks.len() * BLOCK_BYTES) as u64,
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        self.parts().1.write(out)
    }

    fn config_from_header(header: &Header) -> Result<CountingBloomConfig, Error> {
        let () = Width::<BITS>::CHECK;
        header.expect_params(PARAM_NAMES.len())?;
        let num_counters = header.param(0, PARAM_NAMES[0])?;
        if num_counters == 0 {
            return Err(invalid("zero counters".into()));
        }
        let counter_bits = header.param(1, PARAM_NAMES[1])?;
        if ![4, 8, 16].contains(&counter_bits) {
            return Err(invalid(format!("{counter_bits}-bit counters")));
        }
        let block_counters = header.param(2, PARAM_NAMES[2])?;
        if block_counters != 0 && block_counters != 512 / counter_bits {
            return Err(invalid(format!(
                "blocks of {block_counters} {counter_bits}-bit counters"
            )));
        }
        let expected = (BITS, L::BLOCKED);
        if (counter_bits, block_counters != 0) != (u64::from(expected.0), expected.1) {
            let layout = |blocked| if blocked { "blocked" } else { "standard" };
            return Err(Error::new(
                ErrorKind::WrongKind,
                format!(
                    "a {} counting Bloom filter with {counter_bits}-bit counters; this type reads {} ones with {BITS}-bit counters",
                    layout(block_counters != 0),
                    layout(L::BLOCKED)
                ),
            ));
        }
        if L::BLOCKED && num_counters % Width::<BITS>::PER_BLOCK != 0 {
            return Err(invalid(format!(
                "{num_counters} counters are not whole blocks of {block_counters}"
            )));
        }
        let num_hashes = hashes_from_header(header, 3)?;
        SizedFor::from_header(header, SIZED_FOR)?;
        let saturated = header.param(6, PARAM_NAMES[6])?;
        if saturated > num_counters {
            return Err(invalid(format!(
                "{saturated} saturated counters of {num_counters}"
            )));
        }
        let payload = blocks_for::<BITS>(num_counters)
            .checked_mul(BLOCK_BYTES as u64)
            .ok_or_else(|| invalid(format!("{num_counters} counters")))?;
        header.expect_payload_len(payload)?;
        Ok(CountingBloomConfig::of::<L, BITS>(
            num_counters,
            num_hashes,
            header.hasher,
        ))
    }

    /// Reads the counters, then checks what every state the operations
    /// reach satisfies: counters past the end of the array are zero, the
    /// header's count of saturated counters is theirs, and for the standard
    /// layout, without a saturated counter, the counters hold at least k
    /// per item counted.
    ///
    /// That bound is an invariant of the standard layout: an insert adds k
    /// counts and one item, a removal (of any key) takes k and one item
    /// (fewer counts only at a saturated counter, while the bound is not
    /// checked), a union adds both sides, an intersection caps `len` at the
    /// counts over k, `clear` zeroes both, and only an intersection or
    /// `clear` can make a saturated counter unsaturated. The blocked layout has no such bound:
    /// a key adds one to each of its 1 to k *distinct* counters and its
    /// removal takes them back, so after an intersection (which caps `len`
    /// at the counts, one per item) removing a key of k distinct counters
    /// takes k counts and one item, and `len` ends above the counts, even
    /// at zero counts. Its item counter is what the operations made it.
    fn read_payload<R: Read>(
        config: CountingBloomConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let blocks = block_count::<BITS>(config.num_counters)?;
        let counters = Counters::read(input, blocks)?;
        let tail_start = config.num_counters;
        let total = blocks as u64 * Width::<BITS>::PER_BLOCK;
        let sized_for = SizedFor::from_header(header, SIZED_FOR)?;
        let filter = Self::from_parts(&config, sized_for, counters, header.items);
        if (tail_start..total).any(|index| filter.counter_at(index) != 0) {
            return Err(invalid("counters set beyond the end of the array".into()));
        }
        let tally = filter.tally();
        let saturated = header.param(6, PARAM_NAMES[6])?;
        if tally.saturated != saturated {
            return Err(invalid(format!(
                "the header counts {saturated} saturated counters, the payload holds {}",
                tally.saturated
            )));
        }
        let needed = u128::from(header.items) * u128::from(filter.num_hashes());
        if !L::BLOCKED && tally.saturated == 0 && needed > tally.sum {
            return Err(invalid(format!(
                "{} items need {needed} counts, the counters hold {}",
                header.items, tally.sum
            )));
        }
        Ok(filter)
    }
}

filterlab_core::serde_via_format!(impl[L: Layout, const BITS: u32] CountingBloom<L, BITS>);
