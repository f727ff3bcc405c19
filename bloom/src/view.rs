//! Views: `BloomFilter`, `BlockedBloomFilter` and `SplitBlockBloomFilter`
//! answered from the borrowed bytes of their file (a memory map), with no
//! copy and no allocation, through the owned filters' own lookup code.
//!
//! A standard filter's words are read as little-endian `[u8; 8]`s (one
//! unaligned load each on little-endian CPUs), through the same generic
//! probe loop as the owned `u64`s (`words::Word`). A blocked filter's
//! kernels test `[u64; WORDS]` blocks: where the payload is aligned to 8
//! bytes on a little-endian CPU (always, in a memory map: the payload
//! starts a multiple of 8 bytes into the file) the blocks are read in place
//! by the owned filter's kernels, one-key lookups through the same one-key
//! functions; elsewhere each block a query reads is decoded on the stack
//! (`layout::BlockSource`, `Layout::ViewKeys`).

use std::fmt;

use filterlab_core::format::Header;
use filterlab_core::sizing::SizedFor;
use filterlab_core::theory::{bloom_fpp_exact, bloom_fpp_given_fill};
use filterlab_core::view::{Checksum, FileView, Viewable};
use filterlab_core::{Error, FilterKind, KeyHasher, Membership};

use crate::blocked::Wide;
use crate::blocks::{BLOCK_WORDS, SPLIT_WORDS};
use crate::common::check_counter;
use crate::layout::{Blocks, Layout, Shape};
use crate::split_block::Split;
use crate::words::{BloomConfig, all_bits_set, check_tail, contains_batch, count_ones};
use crate::{BlockedBloomFilter, BloomFilter, SplitBlockBloomFilter};

/// A payload's words, little-endian at any alignment.
fn le_words(payload: &[u8]) -> &[[u8; 8]] {
    payload.as_chunks::<8>().0
}

/// Opens a `kind` file and checks what only a pass over the whole payload
/// can: the header's item counter against the bits set, as the reader
/// does. That pass is taken only with [`Checksum::Verify`], which reads
/// every byte anyway; a deferred open touches the header and what queries
/// index, and trusts the counter (only [`Membership::len`] reports it).
fn open(bytes: &[u8], kind: FilterKind, checksum: Checksum) -> Result<FileView<'_>, Error> {
    let file = FileView::open(bytes, kind, checksum)?;
    if checksum == Checksum::Verify {
        check_counter(file.header().items, count_ones(le_words(file.payload())))?;
    }
    Ok(file)
}

/// The header's item counter as a `usize`.
fn items(header: &Header) -> usize {
    usize::try_from(header.items).unwrap_or(usize::MAX)
}

/// A [`BloomFilter`] answering from the borrowed bytes of its file: made
/// by [`BloomFilter::view`]. The same answers as the filter read from those
/// bytes, with the same lookup code, no copy and no allocation.
#[derive(Clone)]
pub struct BloomView<'a> {
    words: &'a [[u8; 8]],
    config: BloomConfig,
    sized_for: SizedFor,
    file: FileView<'a>,
}

impl BloomView<'_> {
    /// Checks the file's checksum (for a view opened with
    /// [`Checksum::Defer`]): one pass at memory speed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ChecksumMismatch`](crate::ErrorKind::ChecksumMismatch)
    /// when the bytes were corrupted.
    pub fn verify_checksum(&self) -> Result<(), Error> {
        self.file.verify_checksum()
    }

    /// This filter's configuration.
    pub fn config(&self) -> BloomConfig {
        self.config
    }
}

impl Membership for BloomView<'_> {
    fn hasher(&self) -> &KeyHasher {
        &self.config.hasher
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        let BloomConfig {
            num_bits,
            num_hashes,
            ..
        } = self.config;
        all_bits_set(self.words, num_bits, num_hashes, hash)
    }

    /// Looks up with the bits of the keys ahead prefetched, as the filter.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let BloomConfig {
            num_bits,
            num_hashes,
            ..
        } = self.config;
        contains_batch(self.words, num_bits, num_hashes, hashes, found);
    }

    fn len(&self) -> usize {
        items(self.file.header())
    }

    /// The bytes it answers from (borrowed, not allocated).
    fn memory_usage(&self) -> usize {
        self.file.payload().len()
    }

    fn capacity(&self) -> Option<usize> {
        self.sized_for.capacity()
    }

    /// (X/m)^k for the X bits set: one pass over the payload.
    fn expected_fpp(&self) -> f64 {
        let set = count_ones(self.words);
        bloom_fpp_given_fill(set, self.config.num_bits, self.config.num_hashes)
    }

    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        bloom_fpp_exact(self.config.num_bits, self.config.num_hashes, items).ok()
    }
}

impl fmt::Debug for BloomView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BloomView")
            .field("config", &self.config)
            .field("items", &self.file.header().items)
            .finish_non_exhaustive()
    }
}

impl Viewable for BloomFilter {
    type View<'a> = BloomView<'a>;

    /// Validates the file as [`from_bytes`](filterlab_core::Persist::from_bytes)
    /// does (the item counter and checksum only with [`Checksum::Verify`])
    /// and borrows its payload.
    fn view(bytes: &[u8], checksum: Checksum) -> Result<BloomView<'_>, Error> {
        let file = open(bytes, FilterKind::Bloom, checksum)?;
        let config = BloomConfig::from_header(file.header())?;
        let words = le_words(file.payload());
        check_tail(words, config.num_bits)?;
        Ok(BloomView {
            words,
            config,
            sized_for: SizedFor::from_header(file.header(), 2)?,
            file,
        })
    }

    fn verify_checksum(view: &BloomView<'_>) -> Result<(), Error> {
        view.verify_checksum()
    }
}

/// A blocked filter of layout `L` (blocks of `N` words) answering from a
/// file's borrowed bytes: the one implementation behind
/// `BlockedBloomView` and `SplitBlockBloomView`.
#[derive(Clone)]
struct BlockView<'a, L: Layout, const N: usize> {
    keys: L::ViewKeys<'a>,
    shape: Shape<L::Probes>,
    kernel: L::Kernel,
    params: L::Params,
    sized_for: SizedFor,
    file: FileView<'a>,
}

impl<'a, L, const N: usize> BlockView<'a, L, N>
where
    L: Layout,
    L::Block: crate::blocks::WordBlock<Words = [u64; N]>,
    [u64; N]: bytemuck::Pod,
{
    /// Validates the file as the filter's reader does and borrows its
    /// payload; the fastest kernel this CPU supports.
    fn open(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let file = open(bytes, L::KIND, checksum)?;
        let (shape, sized_for_at) = Blocks::<L>::shape_from_header(file.header())?;
        let kernel = L::select(None, &shape)?;
        let params = L::params(&kernel);
        Ok(Self {
            keys: L::view_keys(file.payload(), &params),
            shape,
            params,
            kernel,
            sized_for: SizedFor::from_header(file.header(), sized_for_at)?,
            file,
        })
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        L::contains_view_key(&self.kernel, &self.keys, hash)
    }

    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        L::contains_view_batch(&self.kernel, &self.params, &self.keys, hashes, found);
    }

    fn expected_fpp(&self) -> f64 {
        L::fpp_given_fill(le_words(self.file.payload()), &self.shape)
    }

    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let payload = if L::in_place(&self.keys) {
            "aligned words"
        } else {
            "little-endian bytes"
        };
        f.debug_struct(L::NAME)
            .field("num_blocks", &self.shape.num_blocks)
            .field("num_hashes", &self.shape.num_hashes)
            .field("hasher", &self.shape.hasher)
            .field("probes", &self.shape.probes)
            .field("items", &self.file.header().items)
            .field("kernel", &L::kernel(&self.kernel))
            .field("payload", &payload)
            .finish_non_exhaustive()
    }
}

/// A public view type, `$view`, of the blocked filter `$filter` (layout
/// `$layout`, `$words`-word blocks): the newtype around [`BlockView`], its
/// `Membership`, `Debug`, checksum and configuration, `Viewable` for
/// `$filter` and `$filter::view`.
macro_rules! block_view {
    ($(#[$doc:meta])* $view:ident: $filter:ident, $layout:ty, $words:expr, $config:ty) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $view<'a>(BlockView<'a, $layout, $words>);

        impl $view<'_> {
            /// Checks the file's checksum (for a view opened with
            /// [`Checksum::Defer`]): one pass at memory speed.
            ///
            /// # Errors
            ///
            /// [`ErrorKind::ChecksumMismatch`](crate::ErrorKind::ChecksumMismatch)
            /// when the bytes were corrupted.
            pub fn verify_checksum(&self) -> Result<(), Error> {
                self.0.file.verify_checksum()
            }

            /// This filter's configuration.
            pub fn config(&self) -> $config {
                <$layout as Layout>::config(self.0.shape)
            }

            /// The kernel that tests a key's bits: the fastest this CPU
            /// supports.
            pub fn kernel(&self) -> crate::Kernel {
                <$layout as Layout>::kernel(&self.0.kernel)
            }
        }

        impl Membership for $view<'_> {
            fn hasher(&self) -> &KeyHasher {
                &self.0.shape.hasher
            }

            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                self.0.contains_hash(hash)
            }

            /// Looks up with the blocks of the keys ahead prefetched, as
            /// the filter.
            fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
                self.0.contains_hashes(hashes, found);
            }

            fn len(&self) -> usize {
                items(self.0.file.header())
            }

            /// The bytes it answers from (borrowed, not allocated).
            fn memory_usage(&self) -> usize {
                self.0.file.payload().len()
            }

            fn capacity(&self) -> Option<usize> {
                self.0.sized_for.capacity()
            }

            /// The FPP given the bits set in each block: one pass over the
            /// payload.
            fn expected_fpp(&self) -> f64 {
                self.0.expected_fpp()
            }

            fn theoretical_fpp(&self, items: u64) -> Option<f64> {
                <$layout as Layout>::theoretical_fpp(&self.0.shape, items)
            }
        }

        impl fmt::Debug for $view<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.debug(f)
            }
        }

        impl Viewable for $filter {
            type View<'a> = $view<'a>;

            /// Validates the file as [`from_bytes`](filterlab_core::Persist::from_bytes)
            /// does (the item counter and checksum only with
            /// [`Checksum::Verify`]) and borrows its payload.
            fn view(bytes: &[u8], checksum: Checksum) -> Result<$view<'_>, Error> {
                BlockView::open(bytes, checksum).map($view)
            }

            fn verify_checksum(view: &$view<'_>) -> Result<(), Error> {
                view.verify_checksum()
            }
        }
    };
}

block_view!(
    /// A [`BlockedBloomFilter`] answering from the borrowed bytes of its
    /// file: made by [`BlockedBloomFilter::view`]. The same answers as the
    /// filter read from those bytes (either probe layout), with the same
    /// kernels, no copy and no allocation.
    BlockedBloomView: BlockedBloomFilter, Wide, BLOCK_WORDS, crate::BlockedBloomConfig
);

block_view!(
    /// A [`SplitBlockBloomFilter`] answering from the borrowed bytes of its
    /// file: made by [`SplitBlockBloomFilter::view`]. The same answers as
    /// the filter read from those bytes, with the same kernels, no copy and
    /// no allocation.
    SplitBlockBloomView: SplitBlockBloomFilter, Split, SPLIT_WORDS, crate::SplitBlockBloomConfig
);

/// `$filter::view`, so that opening a view needs no trait import.
macro_rules! view_method {
    ($filter:ident, $view:ident) => {
        impl $filter {
            /// Opens the filter held in `bytes` (a file in the binary
            /// format, for example a memory map) as a view: no copy, no
            /// allocation, the same answers. With [`Checksum::Verify`] the
            /// checksum and item counter are checked first (one pass at
            /// memory speed); with [`Checksum::Defer`] only the header and
            /// the payload's length (and
            #[doc = concat!("[`", stringify!($view), "::verify_checksum`]")]
            /// checks the rest when asked).
            ///
            /// # Errors
            ///
            /// As [`Viewable::view`]:
            /// [`ErrorKind::Truncated`](crate::ErrorKind::Truncated),
            /// [`ErrorKind::InvalidHeader`](crate::ErrorKind::InvalidHeader),
            /// [`ErrorKind::ChecksumMismatch`](crate::ErrorKind::ChecksumMismatch)
            /// and the others of a damaged file. Never a panic.
            pub fn view(bytes: &[u8], checksum: Checksum) -> Result<$view<'_>, Error> {
                <Self as Viewable>::view(bytes, checksum)
            }
        }
    };
}

view_method!(BloomFilter, BloomView);
view_method!(BlockedBloomFilter, BlockedBloomView);
view_method!(SplitBlockBloomFilter, SplitBlockBloomView);
