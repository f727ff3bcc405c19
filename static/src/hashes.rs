//! What both builds do to the key hashes before the filter's own
//! construction: group them by their top bits in place (so that the
//! construction walks its array in order instead of at random), and derive
//! the hashes of a retry from them.

use filterlab_core::mix64;

/// Below this many hashes a bucket is sorted by insertion instead of
/// being split further.
const SMALL: usize = 32;

/// Bits of the hash a radix level splits on.
const DIGIT_BITS: u32 = 8;

/// Up to this many bits are split in one level (a Ribbon filter of 10^6
/// keys groups by 9: one pass of 512 buckets, not 256 then 2).
const MAX_DIGIT_BITS: u32 = 10;

/// Reorders `hashes` in place so that their top `bits` bits are
/// non-decreasing: an in-place most-significant-digit radix partition (8
/// bits a level, or the last up to 10 in one; American flag permutation),
/// with no memory beyond a few counters per level. Anything reduced from the top bits by a
/// multiply-shift (a partition, a segment, a position) is then
/// non-decreasing too.
pub(crate) fn group_by_top_bits(hashes: &mut [u64], bits: u32) {
    radix_level(hashes, 0, bits.min(64));
}

/// Groups `slice`, whose top `done` bits are all equal, by bits `done..bits`
/// from the top.
fn radix_level(slice: &mut [u64], done: u32, bits: u32) {
    if done >= bits || slice.len() < 2 {
        return;
    }
    if slice.len() <= SMALL {
        let key = |hash: &u64| hash >> (64 - bits);
        // Insertion sort: at most 32 elements.
        for i in 1..slice.len() {
            let mut j = i;
            while j > 0 && key(&slice[j - 1]) > key(&slice[j]) {
                slice.swap(j - 1, j);
                j -= 1;
            }
        }
        return;
    }
    let width = if bits - done <= MAX_DIGIT_BITS {
        bits - done
    } else {
        DIGIT_BITS
    };
    let shift = 64 - done - width;
    let mask = (1u64 << width) - 1;
    let digit = |hash: u64| ((hash >> shift) & mask) as usize;
    let buckets = 1usize << width;

    let mut counts = [0usize; 1 << MAX_DIGIT_BITS];
    for &hash in slice.iter() {
        counts[digit(hash)] += 1;
    }
    let mut heads = [0usize; 1 << MAX_DIGIT_BITS];
    let mut ends = [0usize; 1 << MAX_DIGIT_BITS];
    let mut start = 0;
    for bucket in 0..buckets {
        heads[bucket] = start;
        start += counts[bucket];
        ends[bucket] = start;
    }
    // American flag: take the element at each bucket's head and swap it
    // into its own bucket until one belonging here comes back.
    for bucket in 0..buckets {
        while heads[bucket] < ends[bucket] {
            let mut value = slice[heads[bucket]];
            let mut home = digit(value);
            while home != bucket {
                std::mem::swap(&mut value, &mut slice[heads[home]]);
                heads[home] += 1;
                home = digit(value);
            }
            slice[heads[bucket]] = value;
            heads[bucket] += 1;
        }
    }
    let mut start = 0;
    for &count in &counts[..buckets] {
        radix_level(&mut slice[start..start + count], done + width, bits);
        start += count;
    }
}

/// 2^64 / φ, odd: spreads the attempt numbers of retries over the seeds.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hash a construction of attempt `attempt` uses for the key hash
/// `hash`: the hash itself for the first attempt (so that the lookups of a
/// filter built at the first try pay nothing for retries), a bijective
/// remix with a seed of its own for every retry.
#[inline]
pub(crate) fn attempt_hash(hash: u64, attempt: u32) -> u64 {
    if attempt == 0 {
        hash
    } else {
        mix64(hash ^ attempt_seed(attempt))
    }
}

/// The seed of a retry: never zero for `attempt` ≥ 1.
#[inline]
fn attempt_seed(attempt: u32) -> u64 {
    u64::from(attempt).wrapping_mul(GOLDEN_GAMMA)
}

/// Turns the hashes of attempt `from` into those of attempt `to`, in
/// place: the key hashes themselves are not kept beside them.
pub(crate) fn reseed(hashes: &mut [u64], from: u32, to: u32) {
    for hash in hashes {
        let original = if from == 0 {
            *hash
        } else {
            unmix64(*hash) ^ attempt_seed(from)
        };
        *hash = attempt_hash(original, to);
    }
}

/// The multiplicative inverse of an odd `value` modulo 2^64 (Newton's
/// iteration doubles the correct low bits at each step).
const fn inverse(value: u64) -> u64 {
    let mut x = value;
    let mut step = 0;
    while step < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(value.wrapping_mul(x)));
        step += 1;
    }
    x
}

/// The inverse of [`mix64`] (SplitMix64's output function).
fn unmix64(mut z: u64) -> u64 {
    const M1: u64 = inverse(0xbf58_476d_1ce4_e5b9);
    const M2: u64 = inverse(0x94d0_49bb_1331_11eb);
    z ^= (z >> 31) ^ (z >> 62);
    z = z.wrapping_mul(M2);
    z ^= (z >> 27) ^ (z >> 54);
    z = z.wrapping_mul(M1);
    z ^ (z >> 30) ^ (z >> 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(count: u64, seed: u64) -> Vec<u64> {
        (0..count).map(|i| mix64(seed ^ mix64(i))).collect()
    }

    #[test]
    fn grouping_orders_the_top_bits_and_keeps_every_hash() {
        for (count, bits) in [
            (0, 5),
            (1, 5),
            (31, 3),
            (1000, 0),
            (1000, 4),
            (5000, 13),
            (20_000, 64),
        ] {
            let mut hashes = stream(count, bits.into());
            let repeated: Vec<u64> = hashes.iter().take(50).copied().collect();
            hashes.extend(repeated);
            let mut expected = hashes.clone();
            group_by_top_bits(&mut hashes, bits);
            if bits > 0 {
                assert!(
                    hashes.is_sorted_by_key(|h| h >> (64 - bits)),
                    "{count} {bits}"
                );
            }
            hashes.sort_unstable();
            expected.sort_unstable();
            assert_eq!(hashes, expected);
        }
        let mut equal = vec![7u64 << 40; 100];
        group_by_top_bits(&mut equal, 30);
        assert!(equal.iter().all(|&h| h == 7 << 40));
    }

    #[test]
    fn retries_remix_bijectively_and_reseed_in_place() {
        let keys = stream(1000, 9);
        for attempt in [1, 2, 77] {
            let mixed: Vec<u64> = keys.iter().map(|&h| attempt_hash(h, attempt)).collect();
            assert!(mixed.iter().zip(&keys).all(|(m, k)| m != k));
            assert!(
                mixed
                    .iter()
                    .all(|&m| (unmix64(m) ^ attempt_seed(attempt)) != m)
            );
        }
        let mut hashes = keys.clone();
        reseed(&mut hashes, 0, 1);
        reseed(&mut hashes, 1, 5);
        let direct: Vec<u64> = keys.iter().map(|&h| attempt_hash(h, 5)).collect();
        assert_eq!(hashes, direct);
        for &h in &keys {
            assert_eq!(unmix64(mix64(h)), h);
        }
        assert_eq!(attempt_hash(12345, 0), 12345);
    }
}
