//! The filterlab filters built once from a key set (filterlab-static). All
//! are built by one path, [`from_keys`]: the entry's builder for the
//! workload, fed the keys through core's `BuildFromKeys`, measured through
//! `StaticSubject`. A future static filter is one more entry here.

use filterlab_core::BuildFromKeys;
use filterlab_core::sizing::human_bytes;
use filterlab_core::theory::hash_bits_needed;
use filterlab_peers::{StaticSubject, Subject};
use filterlab_static::{BinaryFuseBuilder, BinaryFuseFilter, Fingerprint, RibbonFilter};

use crate::error::Error;
use crate::registry::entry::{
    Build, Capability, Entry, Locality, LookupCost, Origin, Sizer, Sizing, SpaceFormula,
};

/// The subject `builder` builds from `keys`: the one path every static
/// filterlab filter is built and measured by.
fn from_keys<B>(builder: &B, keys: &[u64]) -> Result<Box<dyn Subject>, Error>
where
    B: BuildFromKeys,
    B::Filter: 'static,
{
    Ok(StaticSubject::build(builder, keys)?.boxed())
}

/// Whether a 64-bit key hash is too short for `items` keys at `fpp`.
fn hash_limited(items: u64, fpp: f64) -> bool {
    hash_bits_needed(items, fpp) > 64.0
}

/// The filterlab static filters, one entry each.
pub(crate) fn static_entries() -> Vec<Entry> {
    vec![
        Entry::new(
            "RibbonFilter",
            Origin::Filterlab,
            "filterlab-static",
            "standard Ribbon filter (128-bit band, partitions of 1,024 to 2,048 keys) at any p: r or r + 1 fingerprint columns a partition, mixed to meet p exactly; built once from the key set",
            "exact: 2^−r·(1 − A/2P), the first A of P partitions one column wider (Dillinger and Walzer 2021; a query's partition is uniform, its r parities independent of it)",
            Build::FromKeys(|w, keys| from_keys(&RibbonFilter::with_fpp(w.fpp).seed(w.seed), keys)),
        )
        .can(&[Capability::StaticSet])
        .space(SpaceFormula {
            label: "the payload RibbonFilter::params sizes: r or r + 1 columns over 1.0025–1.0032 slots a key, 32-bit partition offsets",
            bits_per_item: |n, p| RibbonFilter::params(n, p).map_or(f64::NAN, |s| s.bits_per_item()),
        })
        .sizer(Sizer {
            for_target: ribbon_sizing,
            within_memory: ribbon_within,
        }),
        binary_fuse::<u8, 3>(
            "BinaryFuseFilter",
            "binary fuse filter, 8-bit fingerprints, 3-wise (Graf and Lemire 2022): p fixed at 2^−8; built once from the key set",
        ),
        binary_fuse::<u8, 4>(
            "BinaryFuseFilter-4wise",
            "binary fuse filter, 8-bit fingerprints, 4-wise: 1.075 slots a key instead of 1.125, one more memory access a lookup; p fixed at 2^−8",
        ),
        binary_fuse::<u16, 3>(
            "BinaryFuseFilter-u16",
            "binary fuse filter, 16-bit fingerprints, 3-wise: p fixed at 2^−16; built once from the key set",
        ),
    ]
}

/// A binary fuse filter's entry: `F`-bit fingerprints, `ARITY` slots a key.
fn binary_fuse<F: Fingerprint, const ARITY: usize>(
    name: &'static str,
    description: &'static str,
) -> Entry {
    Entry::new(
        name,
        Origin::Filterlab,
        "filterlab-static",
        description,
        "exact: 2^−f, the chance that a query's f-bit fingerprint equals the XOR of its slots (which does not depend on it)",
        Build::FromKeys(|w, keys| from_keys(&BinaryFuseFilter::<F, ARITY>::builder().seed(w.seed), keys)),
    )
    .can(&[Capability::StaticSet])
    .fixed_fpp(fuse_fpp::<F>())
    .space(SpaceFormula {
        label: "f bits × the builder's slots (1.125 n with 3 hashes, 1.075 n with 4, more below 10^5 keys)",
        bits_per_item: |n, _| fuse_bytes::<F, ARITY>(n) as f64 * 8.0 / n.max(1) as f64,
    })
    .sizer(Sizer {
        for_target: fuse_sizing::<F, ARITY>,
        within_memory: |n, bytes| {
            let sizing = fuse_sizing::<F, ARITY>(n, fuse_fpp::<F>())?;
            if sizing.memory_bytes <= bytes {
                Ok(sizing)
            } else {
                Err(Error::usage(format!(
                    "its {}-bit fingerprints need {} for {n} keys",
                    F::BITS,
                    human_bytes(sizing.memory_bytes)
                )))
            }
        },
    })
}

/// A binary fuse filter's FPP: 2^−f.
fn fuse_fpp<F: Fingerprint>() -> f64 {
    2f64.powi(-(F::BITS as i32))
}

/// The bytes of a binary fuse filter of `items` keys: its fingerprints,
/// padded to whole 8-byte words.
fn fuse_bytes<F: Fingerprint, const ARITY: usize>(items: u64) -> u64 {
    let slots = BinaryFuseBuilder::<F, ARITY>::num_slots(items);
    (slots * u64::from(F::BITS)).div_ceil(64) * 8
}

/// A binary fuse filter's sizing: its one FPP, refused when above `fpp`.
fn fuse_sizing<F: Fingerprint, const ARITY: usize>(items: u64, fpp: f64) -> Result<Sizing, Error> {
    let own = fuse_fpp::<F>();
    if own > fpp {
        return Err(Error::usage(format!(
            "its FPP is 2^−{} = {own:.3e} whatever the size, above {fpp:e}",
            F::BITS
        )));
    }
    let bytes = fuse_bytes::<F, ARITY>(items);
    let slots = BinaryFuseBuilder::<F, ARITY>::num_slots(items);
    let bits = bytes as f64 * 8.0 / items.max(1) as f64;
    let report = format!(
        "binary fuse filter\n  expected items      {items}\n  fingerprint bits    {} ({ARITY}-wise)\n  \
         slots               {slots} ({:.4} a key)\n  memory              {} ({bits:.2} bits per item)\n  \
         FPP                 {own:.4e} exact, whatever the load\n  built once          from the whole key set; no inserts after",
        F::BITS,
        slots as f64 / items.max(1) as f64,
        human_bytes(bytes)
    );
    let lookup = LookupCost {
        probes: ARITY as u32,
        fewest_meeting_target: false,
        locality: Locality::RandomLines,
    };
    Ok(Sizing::exact(report, bytes, own, lookup).with_bits(bits, hash_limited(items, own)))
}

/// A Ribbon filter's sizing for `items` keys at `fpp`.
fn ribbon_sizing(items: u64, fpp: f64) -> Result<Sizing, Error> {
    let sizing = RibbonFilter::params(items, fpp)?;
    let window = 3 * 8 * (sizing.columns + u32::from(sizing.wide_partitions > 0));
    let report = format!(
        "Ribbon filter\n  expected items      {items}\n  target FPP          {fpp:.3e}\n  \
         fingerprint columns {} ({} of {} partitions with one more)\n  slots               {} ({:.4} a key)\n  \
         memory              {} ({:.2} bits per item)\n  FPP                 {:.4e} exact\n  \
         built once          from the whole key set; no inserts after",
        sizing.columns,
        sizing.wide_partitions,
        sizing.partitions,
        sizing.slots,
        sizing.slots as f64 / items.max(1) as f64,
        human_bytes(sizing.bytes),
        sizing.bits_per_item(),
        sizing.fpp
    );
    let lookup = LookupCost {
        probes: sizing.columns,
        fewest_meeting_target: false,
        locality: Locality::Window { bytes: window },
    };
    Ok(Sizing::exact(report, sizing.bytes, sizing.fpp, lookup)
        .with_bits(sizing.bits_per_item(), hash_limited(items, sizing.fpp)))
}

/// The Ribbon filter of `items` keys with the lowest FPP within `bytes`:
/// its size falls as the target rises, so bisect the target (on a log
/// scale) between 2^−32 and 0.5.
fn ribbon_within(items: u64, bytes: u64) -> Result<Sizing, Error> {
    let fits =
        |log_p: f64| RibbonFilter::params(items, 2f64.powf(log_p)).is_ok_and(|s| s.bytes <= bytes);
    let (mut low, mut high) = (-32.0, -1.0);
    if !fits(high) {
        return Err(Error::usage(format!(
            "a Ribbon filter of {items} keys needs more than {} even at p = 0.5",
            human_bytes(bytes)
        )));
    }
    if fits(low) {
        high = low;
    }
    for _ in 0..40 {
        let middle = f64::midpoint(low, high);
        if fits(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    ribbon_sizing(items, 2f64.powf(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ribbon_sizings_meet_the_target_near_the_bound() {
        for p in [0.1, 0.01, 0.001, 1e-4, 1e-5] {
            let sizing = ribbon_sizing(1_000_000, p).unwrap();
            assert!(sizing.fpp_at_capacity <= p && sizing.fpp_exact);
            let bound = -p.log2();
            assert!(
                sizing.bits_per_item < 1.05 * bound,
                "{p}: {}",
                sizing.bits_per_item
            );
            assert_eq!(sizing.lookup.memory_accesses(), 1);
        }
        // Within a budget: the lowest FPP that fits it, and it fits.
        let budget = 1_000_000 * 7 / 8;
        let within = ribbon_within(1_000_000, budget).unwrap();
        assert!(within.memory_bytes <= budget);
        assert!(
            (0.005..0.012).contains(&within.fpp_at_capacity),
            "{within:?}"
        );
        assert!(ribbon_within(1_000_000, 1000).is_err());
    }

    #[test]
    fn binary_fuse_sizings_have_one_fpp() {
        let eight = fuse_sizing::<u8, 3>(1_000_000, 0.01).unwrap();
        assert_eq!(eight.fpp_at_capacity, 1.0 / 256.0);
        assert!((9.0..9.1).contains(&eight.bits_per_item), "{eight:?}");
        assert_eq!(
            eight.lookup.to_string(),
            "k = 3 probes, each a random cache line"
        );
        let four = fuse_sizing::<u8, 4>(1_000_000, 0.01).unwrap();
        assert!(four.bits_per_item < eight.bits_per_item);
        assert!(fuse_sizing::<u8, 3>(1_000_000, 1e-3).is_err());
        assert!(fuse_sizing::<u16, 3>(1_000_000, 1e-3).is_ok());
    }
}
