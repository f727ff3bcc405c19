//! Memory limits and fallible allocation for filter storage.

use crate::{Error, ErrorKind};

/// The memory cap builders apply unless told otherwise: 64 GiB. A request
/// above it is refused with [`ErrorKind::TooLarge`] before anything is allocated.
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 36;

/// Checks a storage size against a cap.
///
/// # Errors
///
/// [`ErrorKind::TooLarge`] when `bytes` exceeds `limit` or the address space.
pub fn check_memory(bytes: u64, limit: u64, what: &str) -> Result<(), Error> {
    if bytes > limit || usize::try_from(bytes).is_err() {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("{what} needs {bytes} bytes, over the memory limit of {limit} bytes"),
        ));
    }
    Ok(())
}

/// `count` (of array elements: words, blocks) as a `usize`.
///
/// # Errors
///
/// [`ErrorKind::TooLarge`], naming `what`, when `count` exceeds the
/// address space (a 32-bit target).
pub fn addressable(count: u64, what: &str) -> Result<usize, Error> {
    usize::try_from(count).map_err(|_| {
        Error::new(
            ErrorKind::TooLarge,
            format!("{what} exceeds the address space"),
        )
    })
}

/// A zeroed vector of `count` words, or an error instead of an abort when the
/// allocator refuses.
///
/// The reservation is tried first so that a refusal is an error; the vector
/// itself is then allocated zeroed, which the OS provides lazily, so building
/// a multi-gigabyte filter does not write every page up front.
///
/// # Errors
///
/// [`ErrorKind::TooLarge`] when the memory cannot be reserved.
pub fn zeroed_words(count: usize) -> Result<Vec<u64>, Error> {
    let mut probe: Vec<u64> = Vec::new();
    probe.try_reserve_exact(count).map_err(|_| {
        Error::new(
            ErrorKind::TooLarge,
            format!(
                "cannot allocate {count} words ({} bytes)",
                count.saturating_mul(8)
            ),
        )
    })?;
    drop(probe);
    Ok(vec![0; count])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert!(check_memory(100, 100, "x").is_ok());
        assert_eq!(
            check_memory(101, 100, "x").unwrap_err().kind(),
            ErrorKind::TooLarge
        );
        assert_eq!(zeroed_words(3).unwrap(), vec![0, 0, 0]);
        assert_eq!(addressable(7, "x").unwrap(), 7);
        if usize::BITS < 64 {
            let err = addressable(u64::MAX, "the x").unwrap_err();
            assert_eq!(err.kind(), ErrorKind::TooLarge);
        }
        assert_eq!(
            zeroed_words(usize::MAX / 4).unwrap_err().kind(),
            ErrorKind::TooLarge
        );
    }
}
