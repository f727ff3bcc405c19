//! The prefetch hint of batched operations.

/// Asks for the cache line holding `value` ahead of its use.
#[inline]
pub(crate) fn prefetch<T>(value: &T) {
    let _ = value;
}
