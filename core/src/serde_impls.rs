//! The serde impls every filter crate writes the same way, as one macro:
//! always compiled (a crate invokes it whatever its features), expanding to
//! impls under the calling crate's `serde` feature.

/// Implements serde's `Serialize` and `Deserialize` for a
/// [`Persist`](crate::Persist) filter through its binary format (with the
/// functions of the `serde_bytes` module): a byte string, validated on the
/// way in like [`Persist::from_bytes`](crate::Persist::from_bytes), so a
/// filter read through serde is checked exactly like one read from a file.
///
/// The impls are compiled under the *calling* crate's `serde` feature,
/// which must enable `filterlab-core/serde` and the `serde` crate. Generic
/// filters name their parameters in brackets. Every filter crate of the
/// workspace uses it, e.g.:
///
/// ```text
/// filterlab_core::serde_via_format!(BloomFilter);
/// filterlab_core::serde_via_format!(impl[L: Layout, const BITS: u32] CountingBloom<L, BITS>);
/// ```
#[macro_export]
macro_rules! serde_via_format {
    ($filter:ty) => {
        $crate::serde_via_format!(impl[] $filter);
    };
    (impl[$($generics:tt)*] $filter:ty) => {
        #[cfg(feature = "serde")]
        impl<$($generics)*> ::serde::Serialize for $filter {
            /// As the binary format (a byte string).
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $crate::serde_bytes::serialize(self, serializer)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de, $($generics)*> ::serde::Deserialize<'de> for $filter {
            /// From the binary format, validated like `Persist::from_bytes`.
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::serde_bytes::deserialize(deserializer)
            }
        }
    };
}
