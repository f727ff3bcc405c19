//! Growth from 1e4 to 1e6 keys (100×) at P = 1e-2 (issue 11): inserts (per
//! key, growth included), then positive and negative lookups (and, for the
//! filters that delete, removals) in the grown filter, for this crate's `ScalableBloomFilter` (blocked layers, its
//! default) beside growable-bloom-filter 2.1, qfilter 0.3's resizeable mode
//! (told its maximum, 1e6, in advance: the least headroom it can be given)
//! and scalable_cuckoo_filter 0.5, on the same u64 keys in the same groups.
//! growable-bloom-filter measures above P when grown, so it is also run at
//! P/4, where it meets P: memory is compared at a measured FPP ≤ P.
//!
//! `cargo bench -p filterlab-peers --bench scalable` (all of it), or
//! filtered, e.g. `-- 'lookup_negative'`.
//!
//! Every filter is measured through `filterlab_peers::Subject`, one generic
//! function for all; the filterlab filter one key at a time and, labelled
//! `(batched)`, through its batch API. Each prints its bits per item and
//! the FPP measured on the million never-inserted lookup keys.

use criterion::Criterion;
use filterlab_peers::bench::{self, Keys};
use filterlab_peers::{
    FilterlabSubject, Growable, PeerSubject, QFilter, ScalableCuckoo, Subject, Workload,
};
use filterlab_scalable::ScalableBloomFilter;

/// The seed of every filter's hasher.
const SEED: u64 = 1;

/// Keys looked up per pass.
const LOOKUPS: u64 = 1_000_000;

/// The capacity every filter starts with.
const INITIAL: u64 = 10_000;

/// The keys inserted: 100× the initial capacity.
const ITEMS: u64 = 1_000_000;

/// The target (compound) FPP.
const FPP: f64 = 1e-2;

/// Builds one benchmarked filter, empty, for the initial capacity.
type Make = fn(&Workload) -> Option<Box<dyn Subject>>;

/// Every benchmarked filter, in group order.
const SUBJECTS: [(&str, Make); 5] = [
    ("filterlab-scalable", |w| {
        let builder = ScalableBloomFilter::with_fpp(w.fpp).initial_capacity(w.items);
        Some(FilterlabSubject::new(builder.seed(w.seed).build().ok()?).boxed())
    }),
    ("growable-bloom-filter", |w| {
        Some(PeerSubject::boxed(Growable::new(w)))
    }),
    ("growable-bloom-filter-P/4", |w| {
        let tighter = Workload {
            fpp: w.fpp / 4.0,
            ..*w
        };
        Some(PeerSubject::boxed(Growable::new(&tighter)))
    }),
    ("qfilter-resizeable", |w| {
        Some(PeerSubject::boxed(QFilter::resizeable_to(w, ITEMS).ok()?))
    }),
    ("scalable_cuckoo_filter", |w| {
        Some(PeerSubject::boxed(ScalableCuckoo::new(w)))
    }),
];

fn scalable_vs_peers(c: &mut Criterion) {
    let workload = Workload {
        items: INITIAL,
        fpp: FPP,
        seed: SEED,
    };
    let label = format!("grown n0={INITIAL:.0e}..n={ITEMS:.0e},P={FPP:.0e}");
    let keys = Keys::new(ITEMS, LOOKUPS);
    let subjects = SUBJECTS.map(|(name, make)| (name, make(&workload)));
    for (name, refused) in bench::each_subject(c, &label, &keys, subjects) {
        assert_eq!(refused, 0, "{name} refused keys");
    }
}

fn main() {
    bench::run(scalable_vs_peers);
}
