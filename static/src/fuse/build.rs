//! The construction of a binary fuse filter (Graf and Lemire 2022): count
//! the keys of every slot and XOR their hashes, peel the slots that hold
//! one key, then assign fingerprints in the reverse order of the peeling.

use std::marker::PhantomData;

use filterlab_core::memory::addressable;
use filterlab_core::{BuildReport, Error, ErrorKind, prefetch};

use super::layout::{Fingerprint, Fuse, Probe, Shape};
use crate::builder::StaticBase;
use crate::hashes::reseed;
use crate::storage::{padded, zeroed};

/// The assignment prefetches the hash of the key this many places ahead in
/// the peel order. (Not its fingerprints: keys peeled one after another
/// have their slots close together, in cache, and prefetching them too
/// cost 25 instructions a key and 2% of the build's time at 10^6 and 10^7
/// keys.)
const PREFETCH_AHEAD: usize = 32;

/// Builds the filter of `hashes`, retrying with a new seed when the
/// peeling fails. Repeated hashes are held once; when the repeats found
/// would make the arrays larger than the distinct keys need, they are
/// removed and the arrays sized anew, so the filter is the one the
/// distinct keys make (a sort, paid only then).
///
/// Memory: the hashes (grouped by segment into a second vector, before
/// the slots' XOR array is allocated), and 13 bytes a slot: a count and position
/// byte, the XOR of the hashes, and one `u32` array that holds both the
/// queue of slots to peel, from its start, and the peel order, from its
/// end (a slot enters the queue at most once, and each peeled key takes the
/// place of a queued slot, so the two never meet); then the fingerprints
/// once the hashes are dropped.
pub(super) fn build<F: Fingerprint, const ARITY: usize>(
    base: &StaticBase,
    mut hashes: Vec<u64>,
) -> Result<(Fuse<F, ARITY, Vec<u8>>, BuildReport), Error> {
    let mut layout = Layout::new::<F, ARITY>(base, hashes.len())?;
    let mut counts = zeroed::<u8>(layout.slots, "the slot counts")?;
    let mut order = zeroed::<u32>(layout.slots + 1, "the peeling order")?;
    let mut xors = Vec::new();
    // Repeats removed (a sort, done at most once).
    let (mut removed, mut deduped) = (0, false);
    let mut attempt = 0;
    loop {
        layout.shape.attempt = attempt;
        let probe = Probe::new(layout.shape);
        // The slots' XORs are allocated after the grouping, which takes
        // the hashes' space once more and frees the old: the peak stays
        // that of the hashes and the slots, and both arrays come zeroed
        // from the allocator (no copy back, no clearing pass of ours).
        drop(std::mem::take(&mut xors));
        hashes = group_by_segment(&hashes, layout.shape.group_bits())?;
        xors = zeroed::<u64>(layout.slots, "the slot hashes")?;
        if let Some(repeated) = count::<ARITY>(&probe, &hashes, &mut counts, &mut xors) {
            let distinct = hashes.len() - repeated;
            if repeated > 0 && !deduped && layout.larger_than::<F, ARITY>(base, distinct)? {
                // Sized for repeats: removed, and the same attempt again
                // on arrays sized for the distinct keys (the filter is the
                // one built from them).
                (removed, deduped) = (remove_repeats(&mut hashes), true);
                layout = Layout::new::<F, ARITY>(base, hashes.len())?;
                counts = zeroed::<u8>(layout.slots, "the slot counts")?;
                order = zeroed::<u32>(layout.slots + 1, "the peeling order")?;
                continue;
            }
            if peel::<ARITY>(&probe, &mut counts, &mut xors, &mut order) == distinct {
                drop(hashes);
                let mut payload = zeroed::<u8>(layout.fingerprint_bytes, "the fingerprint array")?;
                let peeled = &order[layout.slots + 1 - distinct..];
                assign::<F, ARITY>(&probe, &xors, peeled, &mut payload);
                let fuse = Fuse {
                    hasher: base.hasher,
                    shape: layout.shape,
                    probe,
                    len: distinct as u64,
                    payload,
                    _fingerprint: PhantomData,
                };
                let report = BuildReport::new(attempt, (removed + repeated) as u64);
                return Ok((fuse, report));
            }
        }
        if attempt >= base.max_retries {
            return Err(base.gave_up("BinaryFuseFilter", "peeling"));
        }
        attempt += 1;
        reseed(&mut hashes, attempt - 1, attempt);
        if !deduped {
            // Repeats the cheap check of `count` missed make every attempt
            // fail: after the first failure they are removed for good (a
            // sort, paid only then), and the arrays sized anew if that
            // makes them smaller.
            (removed, deduped) = (remove_repeats(&mut hashes), true);
            if layout.larger_than::<F, ARITY>(base, hashes.len())? {
                layout = Layout::new::<F, ARITY>(base, hashes.len())?;
                counts = zeroed::<u8>(layout.slots, "the slot counts")?;
                order = zeroed::<u32>(layout.slots + 1, "the peeling order")?;
                continue;
            }
        }
        counts.fill(0);
    }
}

/// The arrays of a build: the shape, its slots and the fingerprints' bytes.
struct Layout {
    shape: Shape,
    slots: usize,
    fingerprint_bytes: usize,
}

impl Layout {
    /// The arrays for `items` distinct keys, refused past 2^32 slots or
    /// the memory limit.
    fn new<F: Fingerprint, const ARITY: usize>(
        base: &StaticBase,
        items: usize,
    ) -> Result<Self, Error> {
        let shape = Shape::for_items(items as u64, ARITY);
        let slots = shape.array_len(ARITY);
        if u32::try_from(slots).is_err() {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("{slots} slots: a binary fuse filter holds at most 2^32 slots"),
            ));
        }
        let fingerprint_bytes = padded(addressable(slots, "the fingerprint array")? * F::BYTES);
        base.check_memory(fingerprint_bytes as u64, "the fingerprint array")?;
        Ok(Self {
            shape,
            slots: slots as usize,
            fingerprint_bytes,
        })
    }

    /// Whether `items` distinct keys take fewer slots than this layout has.
    fn larger_than<F: Fingerprint, const ARITY: usize>(
        &self,
        base: &StaticBase,
        items: usize,
    ) -> Result<bool, Error> {
        Ok(Self::new::<F, ARITY>(base, items)?.slots < self.slots)
    }
}

/// Sorts `hashes` and removes the repeats; how many there were.
#[cold]
#[inline(never)]
fn remove_repeats(hashes: &mut Vec<u64>) -> usize {
    let before = hashes.len();
    hashes.sort_unstable();
    hashes.dedup();
    before - hashes.len()
}

/// Groups `hashes` by their top `bits` bits, about one group a segment, so
/// that [`count`] walks the array in order: a counting sort into a new
/// vector (the caller's to free the old).
fn group_by_segment(hashes: &[u64], bits: u32) -> Result<Vec<u64>, Error> {
    let shift = 64 - bits;
    let mut next = vec![0usize; (1 << bits) + 1];
    for &hash in hashes {
        next[(hash >> shift) as usize + 1] += 1;
    }
    for group in 1..next.len() {
        next[group] += next[group - 1];
    }
    let mut grouped = zeroed::<u64>(hashes.len(), "the grouped hashes")?;
    for &hash in hashes {
        let at = &mut next[(hash >> shift) as usize];
        grouped[*at] = hash;
        *at += 1;
    }
    Ok(grouped)
}

/// Counts the keys of every slot (upper six bits of `counts`), XORs their
/// slot positions 0..ARITY (lower two bits) and their hashes (`xors`).
/// Returns how many keys repeated one just before them in a slot (taken
/// out again: Graf and Lemire's check for a slot left with two equal
/// hashes, made only when one of the key's slots XORs to zero), or `None`
/// when a slot's count overflowed.
fn count<const ARITY: usize>(
    probe: &Probe,
    hashes: &[u64],
    counts: &mut [u8],
    xors: &mut [u64],
) -> Option<usize> {
    // One length for both arrays: a slot checked against one is in the other.
    let xors = &mut xors[..counts.len()];
    let mut repeated = 0;
    let mut overflow = false;
    for &hash in hashes {
        let slots = probe.slots::<ARITY>(hash);
        let mut all = u64::MAX;
        for (position, &slot) in slots.iter().enumerate() {
            let count = counts[slot].wrapping_add(4);
            counts[slot] = count ^ position as u8;
            // A count that wrapped to zero is below 4 after the XOR.
            overflow |= count < 4;
            xors[slot] ^= hash;
            all &= xors[slot];
        }
        if all == 0
            && slots
                .iter()
                .any(|&slot| counts[slot] == 8 && xors[slot] == 0)
        {
            for (position, &slot) in slots.iter().enumerate() {
                counts[slot] = counts[slot].wrapping_sub(4) ^ position as u8;
                xors[slot] ^= hash;
            }
            repeated += 1;
        }
    }
    (!overflow).then_some(repeated)
}

/// Peels every slot that holds one key, and the slots that come to hold
/// one as keys are taken out; returns how many keys were peeled, their
/// slots left at the end of `order` (the last peeled first).
///
/// `order` has one entry more than there are slots: the queue pushes
/// without a branch (it writes its next entry, then counts it only when the
/// slot was pushed), and that spare entry keeps the unpushed write off the
/// peel order when the two meet.
fn peel<const ARITY: usize>(
    probe: &Probe,
    counts: &mut [u8],
    xors: &mut [u64],
    order: &mut [u32],
) -> usize {
    let end = order.len();
    let mut queued = 0;
    for (slot, &count) in counts.iter().enumerate() {
        order[queued] = slot as u32;
        queued += usize::from(count >> 2 == 1);
    }
    let mut peeled = 0;
    while queued > 0 {
        queued -= 1;
        let slot = order[queued] as usize;
        if counts[slot] >> 2 != 1 {
            continue;
        }
        let hash = xors[slot];
        let alone_at = usize::from(counts[slot] & 3);
        // Count 0; the position bits and the hash stay for `assign`.
        counts[slot] -= 4;
        peeled += 1;
        order[end - peeled] = slot as u32;
        let slots = probe.slots::<ARITY>(hash);
        for step in 1..ARITY {
            let position = if alone_at + step < ARITY {
                alone_at + step
            } else {
                alone_at + step - ARITY
            };
            let other = slots[position];
            let count = counts[other];
            order[queued] = other as u32;
            queued += usize::from(count >> 2 == 2);
            counts[other] = count.wrapping_sub(4) ^ position as u8;
            xors[other] ^= hash;
        }
    }
    peeled
}

/// Gives each peeled key's slot the value that makes the XOR of its slots
/// its fingerprint, the last peeled first: the other slots of a key are
/// then final when its own is set.
fn assign<F: Fingerprint, const ARITY: usize>(
    probe: &Probe,
    xors: &[u64],
    peeled: &[u32],
    payload: &mut [u8],
) {
    for (index, &slot) in peeled.iter().enumerate() {
        // The slots come in peel order, anywhere in the array of hashes.
        if let Some(&later) = peeled.get(index + PREFETCH_AHEAD) {
            prefetch(&xors[later as usize]);
        }
        let hash = xors[slot as usize];
        // Its own slot is still zero.
        let mut value = F::from_hash(hash);
        for other in probe.slots::<ARITY>(hash) {
            value = value.xor(F::read(payload, other));
        }
        F::write(payload, slot as usize, value);
    }
}
