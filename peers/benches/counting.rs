//! Insert, positive and negative lookups and remove for this crate's
//! counting Bloom filters (4-bit counters) beside fastbloom-rs 0.5's
//! `CountingBloomFilter` (4-bit) and qfilter 0.3 (a quotient filter that
//! deletes and counts), and filterlab-bloom's `BlockedBloomFilter` (what the
//! blocked counting filter's lookups are compared with), on the same u64
//! keys in the same groups: n = 1e7 at p = 1e-2 (issue 9), and n = 1e5.
//!
//! `cargo bench -p filterlab-peers --bench counting` (all of it), or
//! filtered, e.g. `-- 'n=1e7'` or `-- 'lookup_negative/.*n=1e7'`.
//!
//! Every filter is measured through `filterlab_peers::Subject`, one generic
//! function for all; filterlab's filters one key at a time and, labelled
//! `(batched)`, through their batch API. Each prints its bits per item and
//! the FPP measured on the million never-inserted lookup keys.

use criterion::Criterion;
use filterlab_bloom::BlockedBloomFilter;
use filterlab_counting_bloom::{BlockedCountingBloomFilter, CountingBloomFilter};
use filterlab_peers::Workload;
use filterlab_peers::bench::{self, Keys};
use filterlab_peers::{FastBloomRsCounting, FilterlabSubject, PeerSubject, QFilter, Subject};

/// The seed of every filter's hasher.
const SEED: u64 = 1;

/// Keys looked up (and removed) per pass.
const LOOKUPS: u64 = 1_000_000;

/// Builds one benchmarked filter, empty, for n keys at p.
type Make = fn(u64, f64) -> Option<Box<dyn Subject>>;

/// Every benchmarked filter, in group order.
const SUBJECTS: [(&str, Make); 5] = [
    ("filterlab-counting", |n, p| {
        let filter = CountingBloomFilter::with_fpp(p)
            .expected_items(n)
            .seed(SEED);
        Some(
            FilterlabSubject::new(filter.build().ok()?)
                .removable()
                .boxed(),
        )
    }),
    ("filterlab-blocked-counting", |n, p| {
        let builder = BlockedCountingBloomFilter::with_fpp(p).expected_items(n);
        Some(
            FilterlabSubject::new(builder.seed(SEED).build().ok()?)
                .removable()
                .boxed(),
        )
    }),
    ("filterlab-blocked-bloom", |n, p| {
        let builder = BlockedBloomFilter::with_fpp(p).expected_items(n).seed(SEED);
        Some(FilterlabSubject::new(builder.build().ok()?).boxed())
    }),
    ("fastbloom-rs", |n, p| {
        Some(PeerSubject::boxed(FastBloomRsCounting::new(&workload(
            n, p,
        ))))
    }),
    ("qfilter", |n, p| {
        Some(PeerSubject::boxed(QFilter::new(&workload(n, p)).ok()?))
    }),
];

fn workload(items: u64, fpp: f64) -> Workload {
    Workload {
        items,
        fpp,
        seed: SEED,
    }
}

fn counting_vs_peers(c: &mut Criterion) {
    let fpp = 1e-2;
    for items in [10_000_000u64, 100_000] {
        let keys = Keys::new(items, LOOKUPS);
        let label = format!("n={items:.0e},p={fpp:.0e}");
        let subjects = SUBJECTS.map(|(name, make)| (name, make(items, fpp)));
        for (name, refused) in bench::each_subject(c, &label, &keys, subjects) {
            assert_eq!(refused, 0, "{name} refused keys");
        }
    }
}

fn main() {
    bench::run(counting_vs_peers);
}
