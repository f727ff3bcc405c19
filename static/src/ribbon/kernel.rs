//! Work compiled with POPCNT where the CPU has it: the workspace's default
//! target (x86-64 baseline) has no population count instruction, and
//! without it each parity of a Ribbon lookup or back-substitution costs a
//! dozen instructions instead of one. The only `unsafe` of the crate:
//! calling a function compiled for a feature that runtime detection found.
//!
//! Detected once, when a filter is built or read, and kept in the filter as
//! a [`Popcnt`] value (as filterlab-bloom keeps its AVX2 kernel): a lookup
//! branches on it, always the same way, and a batch runs whole inside the
//! POPCNT-compiled function. What runs there is any [`Counting`] work: its
//! `run` is inlined into that function and compiled with the instruction.

/// Work to compile with POPCNT: [`Popcnt::run`] runs it inside a function
/// compiled for the instruction, so its `run` must be `#[inline(always)]`.
pub(crate) trait Counting {
    /// What the work returns.
    type Output;

    /// Does the work.
    fn run(self) -> Self::Output;
}

/// Proof that the CPU has POPCNT: made only by [`Popcnt::detect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Popcnt(());

impl Popcnt {
    /// A `Popcnt` when this CPU has the instruction.
    pub(crate) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            return Some(Self(()));
        }
        None
    }

    /// Runs `work` compiled with POPCNT.
    #[inline]
    pub(crate) fn run<W: Counting>(self, work: W) -> W::Output {
        let Self(()) = self;
        // SAFETY: a `Popcnt` exists only where `is_x86_feature_detected!`
        // found POPCNT on this CPU, the one feature the function enables.
        unsafe { run_with_popcnt(work) }
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "popcnt"))]
fn run_with_popcnt<W: Counting>(work: W) -> W::Output {
    work.run()
}
