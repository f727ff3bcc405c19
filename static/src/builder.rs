//! What the builders of both filters share: the hasher, the retry bound and
//! the memory limit, with their setters.

use filterlab_core::memory::DEFAULT_MEMORY_LIMIT;
use filterlab_core::{Error, ErrorKind, KeyHasher};

/// Construction attempts a build may start again with a new seed unless
/// told otherwise ([`max_retries`](crate::RibbonBuilder::max_retries)).
pub const DEFAULT_MAX_RETRIES: u32 = 32;

/// The settings every static builder has.
#[derive(Clone, Debug)]
pub(crate) struct StaticBase {
    /// The key hasher (seed 0 unless set).
    pub(crate) hasher: KeyHasher,
    /// The most bytes the filter may take (64 GiB unless set).
    pub(crate) max_memory: u64,
    /// Retries with a new seed before the build gives up.
    pub(crate) max_retries: u32,
}

impl Default for StaticBase {
    fn default() -> Self {
        Self {
            hasher: KeyHasher::default(),
            max_memory: DEFAULT_MEMORY_LIMIT,
            max_retries: DEFAULT_MAX_RETRIES,
        }
    }
}

impl StaticBase {
    /// Refuses a filter of `bytes` over the memory limit.
    pub(crate) fn check_memory(&self, bytes: u64, what: &str) -> Result<(), Error> {
        filterlab_core::memory::check_memory(bytes, self.max_memory, what)
    }

    /// The error of a build whose every allowed attempt failed.
    pub(crate) fn gave_up(&self, filter: &str, what: &str) -> Error {
        Error::new(
            ErrorKind::ConstructionFailed,
            format!(
                "{filter}: {what} failed {} times with a new seed each time",
                u64::from(self.max_retries) + 1
            ),
        )
    }
}

/// The setters of a static builder whose field `base` is a [`StaticBase`].
macro_rules! static_setters {
    () => {
        ::filterlab_core::builder_setters!(base => seed, hasher, max_memory);

        ::filterlab_core::builder_setters! {
            /// How many times a construction that fails for its seed is
            /// started again with a new one before the build gives up with
            /// [`ErrorKind::ConstructionFailed`](filterlab_core::ErrorKind::ConstructionFailed)
            /// (default [`DEFAULT_MAX_RETRIES`](crate::DEFAULT_MAX_RETRIES)):
            /// the whole binary fuse filter, or each partition of a Ribbon
            /// filter (solved apart, each retried with more slots and a new
            /// draw of starts). The report counts every retry.
            max_retries(retries: u32) => base.max_retries = retries;
        }
    };
}
pub(crate) use static_setters;
