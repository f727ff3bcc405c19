//! The static filters at 10^6 keys: builds, and lookups (half of the keys
//! held) one by one and batched, owned and through a view of the file's
//! bytes: a `RibbonFilter` at p = 1% and at 2^−8, a
//! `BinaryFuseFilter<u8>` (2^−8) and `<u16, 4>` (2^−16).
//!
//! `cargo bench -p filterlab-static`, or filtered, e.g. `-- ribbon`.
//! (Comparisons with xorf's binary fuse and xor filters live in the
//! repository's unpublished `filterlab-peers` crate:
//! `examples/static_side_by_side.rs`.)

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::view::{Checksum, Viewable};
use filterlab_static::{BinaryFuseFilter, BuildFromKeys, Membership, Persist, RibbonFilter};

const ITEMS: u64 = 1_000_000;

/// The benchmarks of one filter type, built by `builder`.
fn measure<B>(c: &mut Criterion, name: &str, builder: &B)
where
    B: BuildFromKeys,
    B::Filter: Viewable,
{
    let keys: Vec<u64> = (0..ITEMS).map(|i| insert_key(5, i)).collect();
    let mixed: Vec<u64> = keys
        .iter()
        .zip((0..ITEMS).map(|i| query_key(5, i)))
        .flat_map(|(&held, absent)| [held, absent])
        .collect();
    let filter = builder.build_from_keys(&keys).expect("builds").filter;
    let bytes = filter.to_bytes();
    let view = B::Filter::view(&bytes, Checksum::Verify).expect("its own bytes");

    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(ITEMS));
    group.bench_function("build", |b| {
        b.iter(|| builder.build_from_keys(&keys).expect("builds").filter.len());
    });
    group.throughput(Throughput::Elements(2 * ITEMS));
    group.bench_function("contains, half held", |b| {
        b.iter(|| mixed.iter().filter(|&key| filter.contains(key)).count());
    });
    group.bench_function("contains_many, half held", |b| {
        b.iter(|| black_box(filter.contains_many(&mixed)));
    });
    group.bench_function("view contains, half held", |b| {
        b.iter(|| mixed.iter().filter(|&key| view.contains(key)).count());
    });
    group.finish();
}

fn filters(c: &mut Criterion) {
    measure(c, "RibbonFilter p=1%", &RibbonFilter::with_fpp(0.01));
    measure(
        c,
        "RibbonFilter p=2^-8",
        &RibbonFilter::with_fpp(1.0 / 256.0),
    );
    measure(
        c,
        "BinaryFuseFilter<u8>",
        &BinaryFuseFilter::<u8>::builder(),
    );
    measure(
        c,
        "BinaryFuseFilter<u16, 4>",
        &BinaryFuseFilter::<u16, 4>::builder(),
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = filters
}
criterion_main!(benches);
