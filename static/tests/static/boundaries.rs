//! Builds at n = 0, 1, 2 and on both sides of every size boundary: the
//! band of a Ribbon partition (128 slots), the partition count (doubling
//! every 2048 keys), the column widths (none, some and all partitions
//! wide, 1 to 32 columns); a binary fuse filter's segment length (a power
//! of two that grows with n) and its size factor (constant from 10^6 keys
//! with 3 hashes, 600,000 with 4).

use filterlab_static::{BinaryFuseFilter, Membership, RibbonFilter};

use crate::{check_build, keys};

/// `n − 1`, `n` and `n + 1` for each boundary `n`, and the tiny sizes.
fn around(boundaries: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut sizes = vec![0, 1, 2, 3];
    for n in boundaries {
        sizes.extend([n.saturating_sub(1), n, n + 1]);
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

#[test]
fn ribbon_builds_around_every_boundary() {
    let sizes = around([127, 128, 129, 2048, 4096, 8192, 16_384]);
    // Powers of two, mixed widths, 32 columns, and below one column.
    for fpp in [0.25, 0.6, 0.1, 0.01, 2f64.powi(-20), 3e-10, 2f64.powi(-32)] {
        for &n in &sizes {
            let filter = check_build(&RibbonFilter::with_fpp(fpp).seed(n), &keys(n, n));
            assert!(filter.expected_fpp() <= fpp, "{filter:?}");
        }
    }
}

#[test]
fn ribbon_wide_partitions_take_any_share() {
    // 2^3 partitions, 0 to 7 of them wide (8 wide is 8 columns, no wide).
    for wide in 0..8u32 {
        let share = f64::from(wide) / 8.0;
        let fpp = 2f64.powi(-7) * (1.0 - share / 2.0);
        let filter = check_build(&RibbonFilter::with_fpp(fpp).seed(7), &keys(7, 12_000));
        assert_eq!(filter.partitions(), (8, u64::from(wide)), "{fpp}");
    }
}

/// Where the segment length of a binary fuse filter of arity `arity`
/// doubles: 2^⌊ln n / ln 3.33 + 2.25⌋ (3), 2^⌊ln n / ln 2.91 − 0.5⌋ (4).
fn segment_steps(arity: usize, up_to: u64) -> Vec<u64> {
    let (base, offset) = if arity == 3 {
        (3.33f64, 2.25)
    } else {
        (2.91f64, -0.5)
    };
    (3..=18)
        .map(|exponent: i32| base.powf(f64::from(exponent) - offset).ceil() as u64)
        .filter(|&n| n <= up_to)
        .collect()
}

#[test]
fn binary_fuse_builds_around_every_boundary() {
    for n in around(segment_steps(3, 200_000)) {
        check_build(&BinaryFuseFilter::<u8>::builder().seed(n), &keys(n, n));
        check_build(&BinaryFuseFilter::<u32>::builder().seed(n), &keys(n, n));
    }
    for n in around(segment_steps(4, 200_000)) {
        check_build(&BinaryFuseFilter::<u16, 4>::builder().seed(n), &keys(n, n));
    }
    // The size factors stop shrinking at 10^6 (3-wise) and 6·10^5 (4-wise).
    for n in [999_999, 1_000_000, 1_000_001] {
        check_build(&BinaryFuseFilter::<u8>::builder(), &keys(n, n));
    }
    for n in [599_999, 600_000, 600_001] {
        check_build(&BinaryFuseFilter::<u8, 4>::builder(), &keys(n, n));
    }
}
