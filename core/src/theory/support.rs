//! What the formula files share: the limits of exact evaluation, and the
//! integer power every per-key FPP is raised to.

use crate::Error;
use crate::sizing::ensure;

/// The most probes per key the exact formulas evaluate. Their cost grows
/// like k² ln k; no FPP a 64-bit key hash can deliver needs more than 64
/// probes, so filters never come near it.
pub const MAX_EXACT_HASHES: u32 = 256;

/// The largest block the exact blocked formula evaluates, in bits: eight
/// times a cache line. The mixture over a block's load visits about
/// 40√(B ln k / k) loads where some bits are likely still clear, each
/// costing up to O(k² ln k), so the worst case grows like √B: about 0.1 s
/// at 4096 bits and k = [`MAX_EXACT_HASHES`], ten times that at 2^16 bits.
pub const MAX_EXACT_BLOCK_BITS: u32 = 1 << 12;

/// The error of an exact formula asked for more probes than it evaluates.
pub(crate) fn check_exact_hashes(num_hashes: u32) -> Result<(), Error> {
    ensure(num_hashes <= MAX_EXACT_HASHES, || {
        format!(
            "the exact FPP is evaluated for at most {MAX_EXACT_HASHES} probes per key, got {num_hashes}"
        )
    })
}

/// x^k for any k ≥ 0, by square-and-multiply in the order of compiler-rt's
/// `__powidf2` (so the same bits as `powi`), inlined: the formulas raise a
/// fill to the k-th power once per load they sum.
#[inline]
pub(crate) fn pow_hashes(mut x: f64, num_hashes: u32) -> f64 {
    let mut k = num_hashes;
    let mut result = 1.0;
    loop {
        if k & 1 == 1 {
            result *= x;
        }
        k >>= 1;
        if k == 0 {
            return result;
        }
        x *= x;
    }
}

/// Every equally likely assignment of `items` keys to one of `blocks`
/// blocks and of each key's `k` probes to cells of its block (with
/// replacement), for the brute-force checks of the blocked formulas:
/// `visit` sees each assignment's probes as (block, cell) pairs, key after
/// key. Returns the number of assignments.
#[cfg(test)]
pub(crate) fn for_each_assignment(
    blocks: usize,
    cells: usize,
    k: u32,
    items: u32,
    mut visit: impl FnMut(&[(usize, usize)]),
) -> usize {
    let choices = blocks * cells.pow(k);
    let assignments = choices.pow(items);
    let mut probes = Vec::with_capacity(items as usize * k as usize);
    for assignment in 0..assignments {
        probes.clear();
        let mut rest = assignment;
        for _ in 0..items {
            let mut choice = rest % choices;
            rest /= choices;
            let block = choice % blocks;
            choice /= blocks;
            for _ in 0..k {
                probes.push((block, choice % cells));
                choice /= cells;
            }
        }
        visit(&probes);
    }
    assignments
}
