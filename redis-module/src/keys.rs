//! What the BF and CF commands share inside the server: the module's
//! options, the two data types and their callbacks, a key's value with the
//! bytes it holds, opening a key of a type, creating a filter only after
//! its size is known to fit, hashing a command's items in batches.

use std::ffi::{CStr, CString};
use std::sync::OnceLock;

use filterlab_core::{BATCH, Error, ErrorKind, KeyHasher};

use crate::bloom::Bloom;
use crate::cuckoo::Cuckoo;
use crate::ffi::{Aof, Args, Ctx, DataType, Digest, Held, Key, LoadCtx, RdbSink, RdbSource};
use crate::ffi::{Level, TypeCallbacks, log};
use crate::grammar::{Argv, NOT_FOUND, Parsed, Refusal, WRONG_TYPE};
use crate::options::Options;
use crate::payload::Sink;
use crate::stored::{ChunkRefusal, FilterValue, Loaded, Stored, dump_all, load_chunk};

/// The data type of BF keys. Its name differs from RedisBloom's
/// (`MBbloom--`), so both modules load side by side, and does not change
/// with the command prefix, so an RDB file loads whatever prefix the
/// module is given.
const BLOOM_TYPE_NAME: &str = "FLTRbloom";
/// The data type of CF keys (RedisBloom's is `MBbloomCF`).
const CUCKOO_TYPE_NAME: &str = "FLTRcucko";
/// The data types' encoding version.
const ENCODING_VERSION: i32 = 1;

/// The data type of BF keys.
pub(crate) static BLOOM: DataType<Keyed<Bloom>> = DataType::new();
/// The data type of CF keys.
pub(crate) static CUCKOO: DataType<Keyed<Cuckoo>> = DataType::new();

/// What the module was loaded with.
struct Settings {
    options: Options,
    /// The LOADCHUNK commands AOF rewrite emits, under their prefixes.
    bf_loadchunk: CString,
    cf_loadchunk: CString,
}

static LOADED: OnceLock<Settings> = OnceLock::new();

fn loaded() -> &'static Settings {
    LOADED
        .get()
        .expect("commands run only after the module loaded")
}

/// The module's options.
pub(crate) fn options() -> &'static Options {
    &loaded().options
}

/// Keeps the options and registers the two data types.
///
/// # Errors
///
/// When the server refuses a data type.
pub(crate) fn install(ctx: &LoadCtx, options: Options) -> Result<&'static Options, String> {
    let command = |name: String| CString::new(name).unwrap_or_default();
    let bf_loadchunk = command(options.bf_command("LOADCHUNK"));
    let cf_loadchunk = command(options.cf_command("LOADCHUNK"));
    let loaded = LOADED.get_or_init(|| Settings {
        options,
        bf_loadchunk,
        cf_loadchunk,
    });
    BLOOM.register(ctx, BLOOM_TYPE_NAME, ENCODING_VERSION)?;
    CUCKOO.register(ctx, CUCKOO_TYPE_NAME, ENCODING_VERSION)?;
    Bloom::warm_up();
    Ok(&loaded.options)
}

/// A key's value: what it stores, and the bytes it holds in the server's
/// allocator (the module's allocator counts them as they are allocated and
/// freed, allocator rounding included: MEMORY USAGE, and what DEL
/// releases).
#[derive(Clone, Debug)]
pub(crate) struct Keyed<F> {
    /// The filter, or a restore under way.
    pub(crate) stored: Stored<F>,
    bytes: usize,
}

impl<F> Keyed<F> {
    /// A new key's value, its bytes counted when its command ends.
    pub(crate) fn new(stored: Stored<F>) -> Self {
        Self { stored, bytes: 0 }
    }
}

/// What a family's commands need of its filter beyond [`FilterValue`]:
/// its data type, and the lookups both families answer alike.
pub(crate) trait Family: FilterValue + Clone + 'static {
    /// The data type of its keys.
    fn data_type() -> &'static DataType<Keyed<Self>>;
    /// Its LOADCHUNK command, under the module's prefix.
    fn loadchunk() -> &'static CStr;
    /// The filter's key hasher (items hash over their bytes).
    fn hasher(&self) -> KeyHasher;
    /// Whether a pre-hashed item may be present.
    fn contains_hash(&self, hash: u64) -> bool;
    /// The filter's batched lookup, prefetching in large filters.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]);
}

/// Implements [`Family`] for a filter whose lookups are its own methods.
macro_rules! family {
    ($filter:ty, $data_type:expr, $loadchunk:ident) => {
        impl Family for $filter {
            fn data_type() -> &'static DataType<Keyed<Self>> {
                &$data_type
            }
            fn loadchunk() -> &'static CStr {
                &loaded().$loadchunk
            }
            fn hasher(&self) -> KeyHasher {
                <$filter>::hasher(self)
            }
            fn contains_hash(&self, hash: u64) -> bool {
                <$filter>::contains_hash(self, hash)
            }
            fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
                <$filter>::contains_hashes(self, hashes, found);
            }
        }
    };
}

family!(Bloom, BLOOM, bf_loadchunk);
family!(Cuckoo, CUCKOO, cf_loadchunk);

/// DEBUG DIGEST's input: the saved representation, in saved pieces.
struct DigestSink<'a>(&'a mut Digest);

impl Sink for DigestSink<'_> {
    fn unsigned(&mut self, value: u64) {
        self.0.add(&value.to_le_bytes());
    }

    fn buffer(&mut self, bytes: &[u8]) {
        self.0.add(bytes);
    }
}

impl<F: Family> TypeCallbacks for Keyed<F> {
    fn load(source: &mut RdbSource, version: i32) -> Result<Self, Error> {
        Stored::load(source, version).map(Self::new)
    }

    fn save(&self, sink: &mut RdbSink) -> Result<(), Error> {
        self.stored.save(sink)
    }

    /// LOADCHUNK commands, as RedisBloom's rewrite emits them: a restore
    /// under way as the chunks it holds.
    fn rewrite(&self, aof: &mut Aof) -> Result<(), Error> {
        match &self.stored {
            Stored::Ready(filter) => {
                dump_all(filter, |cursor, chunk| {
                    aof.emit_chunk(F::loadchunk(), cursor, chunk);
                    Ok(())
                })?;
            }
            Stored::Restoring(pending) => {
                for (cursor, chunk) in (1u64..).zip(pending.chunks()) {
                    aof.emit_chunk(F::loadchunk(), cursor, chunk);
                }
            }
        }
        Ok(())
    }

    fn allocated(&self) -> usize {
        self.bytes
    }

    fn account(&mut self, delta: isize) {
        self.bytes = self.bytes.saturating_add_signed(delta);
    }

    fn digest(&self, digest: &mut Digest) {
        if let Err(err) = self.stored.save(&mut DigestSink(digest)) {
            log(Level::Warning, &format!("filterlab: DEBUG DIGEST: {err}"));
        }
    }

    fn duplicate(&self) -> Self {
        Self::new(self.stored.clone())
    }
}

/// Adds the bytes a command allocated (or freed, when negative) to the
/// value of the key it names (argument 1), whichever type it holds.
pub(crate) fn account(ctx: &Ctx, args: &Args<'_>, delta: isize) {
    if args.count() < 2 {
        return;
    }
    let mut key = ctx.open_key(args, 1, false);
    if let Held::Value(keyed) = key.get(&BLOOM) {
        keyed.account(delta);
    } else if let Held::Value(keyed) = key.get(&CUCKOO) {
        keyed.account(delta);
    }
}

/// Generates the `extern "C"` entry the server calls for each handler: it
/// runs the handler through [`crate::ffi::dispatch`], which counts the
/// bytes the command allocated for its key.
macro_rules! entries {
    ($($entry:ident => $handler:path),* $(,)?) => {
        $(
            pub(crate) extern "C" fn $entry(
                ctx: *mut ::redis_module::raw::RedisModuleCtx,
                argv: *mut *mut ::redis_module::raw::RedisModuleString,
                argc: ::std::ffi::c_int,
            ) -> ::std::ffi::c_int {
                $crate::ffi::dispatch(ctx, argv, argc, $handler, $crate::keys::account)
            }
        )*
    };
}
pub(crate) use entries;

/// The reply to a command on a key whose restore is under way.
fn restoring<T>(progress: (u64, u64)) -> Parsed<T> {
    Err(Refusal::Text(
        format!(
            "ERR the filter is being restored: LOADCHUNK has {} of its {} chunks",
            progress.0, progress.1
        )
        .into(),
    ))
}

/// A key's filter of family `F`: `None` when the key is empty.
///
/// # Errors
///
/// WRONGTYPE for a key of another type; an error while a restore is under way.
pub(crate) fn filter_of<F: Family>(key: &mut Key) -> Parsed<Option<&mut F>> {
    match key.get(F::data_type()) {
        Held::Empty => Ok(None),
        Held::Other => Err(WRONG_TYPE),
        Held::Value(keyed) => match &mut keyed.stored {
            Stored::Ready(filter) => Ok(Some(filter)),
            Stored::Restoring(pending) => restoring(pending.progress()),
        },
    }
}

/// A key's filter, created by `create` (and stored) when the key is empty;
/// whether it was created.
///
/// # Errors
///
/// As [`filter_of`], and those of `create`.
pub(crate) fn filter_or_create<F: Family>(
    key: &mut Key,
    create: impl FnOnce() -> Parsed<F>,
) -> Parsed<(&mut F, bool)> {
    let empty = matches!(key.get(F::data_type()), Held::Empty);
    if empty {
        let filter = create()?;
        key.set(F::data_type(), Keyed::new(Stored::Ready(filter)));
    }
    match filter_of(key)? {
        Some(filter) => Ok((filter, empty)),
        None => Err(Refusal::text("ERR could not create filter")),
    }
}

/// Creates a filter of `bytes` bytes with `create`, after checking that
/// it fits under the server's `maxmemory`; the two refusals in
/// RedisBloom's words (`failed` is its text for other failures).
pub(crate) fn create_sized<F>(
    ctx: &Ctx,
    bytes: Result<u64, Error>,
    create: impl FnOnce() -> Result<F, Error>,
    failed: &'static str,
) -> Parsed<F> {
    const NO_MEMORY: Refusal = Refusal::text("ERR Insufficient memory to create filter");
    let refusal = |err: &Error| {
        if err.kind() == ErrorKind::TooLarge {
            NO_MEMORY
        } else {
            Refusal::text(failed)
        }
    };
    let bytes = bytes.map_err(|err| refusal(&err))?;
    if ctx
        .memory_headroom()
        .is_some_and(|headroom| bytes > headroom)
    {
        return Err(NO_MEMORY);
    }
    create().map_err(|err| refusal(&err))
}

/// Hashes the items of `args` from `from` on in batches of
/// [`filterlab_core::BATCH`] into a buffer on the stack (nothing allocated
/// per item) and hands each batch to `batch` with the index of its first
/// item; stops when `batch` returns `false`.
pub(crate) fn for_each_batch(
    args: &Args<'_>,
    from: usize,
    hash: impl Fn(&[u8]) -> u64,
    mut batch: impl FnMut(usize, &[u64]) -> bool,
) {
    let mut hashes = [0u64; filterlab_core::BATCH];
    let mut start = from;
    while start < args.count() {
        let count = (args.count() - start).min(hashes.len());
        for (offset, slot) in hashes[..count].iter_mut().enumerate() {
            *slot = hash(args.bytes(start + offset));
        }
        if !batch(start, &hashes[..count]) {
            return;
        }
        start += count;
    }
}

/// LOADCHUNK: loads one chunk of a dump into the key (see
/// [`load_chunk`]). The last chunk replaces the chunks kept with the
/// filter they restore; a complete dump that does not restore deletes the
/// key.
///
/// # Errors
///
/// WRONGTYPE for a key of another type; the chunk's refusal inside.
pub(crate) fn load_chunk_into<F: Family>(
    key: &mut Key,
    cursor: i64,
    chunk: &[u8],
) -> Parsed<Result<(), ChunkRefusal>> {
    let empty = match key.get(F::data_type()) {
        Held::Other => return Err(WRONG_TYPE),
        Held::Empty => true,
        Held::Value(_) => false,
    };
    if empty {
        let stored = match load_chunk::<F>(None, cursor, chunk) {
            Ok(Loaded::Started(stored)) => stored,
            Ok(Loaded::Restored(filter)) => Stored::Ready(filter),
            Ok(Loaded::Kept) => return Ok(Ok(())),
            Err(refusal) => return Ok(Err(refusal)),
        };
        key.set(F::data_type(), Keyed::new(stored));
        return Ok(Ok(()));
    }
    let Held::Value(keyed) = key.get(F::data_type()) else {
        return Ok(Err(ChunkRefusal::NotFound));
    };
    let outcome = match load_chunk(Some(&mut keyed.stored), cursor, chunk) {
        Ok(Loaded::Restored(filter)) => {
            keyed.stored = Stored::Ready(filter);
            Ok(())
        }
        Ok(Loaded::Started(stored)) => {
            keyed.stored = stored;
            Ok(())
        }
        Ok(Loaded::Kept) => Ok(()),
        Err(refusal) => Err(refusal),
    };
    if matches!(outcome, Err(ChunkRefusal::BadDump(_))) {
        key.delete();
    }
    Ok(outcome)
}

/// A key's filter that must exist.
///
/// # Errors
///
/// "ERR not found" for an empty key, and as [`filter_of`].
pub(crate) fn existing<F: Family>(key: &mut Key) -> Parsed<&mut F> {
    filter_of::<F>(key)?.ok_or(NOT_FOUND)
}

/// The filter under argument 1 for a lookup: `None` for an empty key or
/// one of another type (RedisBloom answers 0 for those).
///
/// # Errors
///
/// While a restore is under way.
pub(crate) fn lookup<F: Family>(key: &mut Key) -> Parsed<Option<&mut F>> {
    match filter_of::<F>(key) {
        Err(Refusal::Text(text)) if text.starts_with("WRONGTYPE") => Ok(None),
        found => found,
    }
}

/// BF.EXISTS / CF.EXISTS key item
pub(crate) fn exists<F: Family>(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let found = lookup::<F>(&mut key)?
        .is_some_and(|filter| filter.contains_hash(filter.hasher().hash_bytes(args.bytes(2))));
    ctx.reply_bool(found);
    Ok(())
}

/// BF.MEXISTS / CF.MEXISTS key item [item …]: every batch hashed, then
/// looked up with the filter's prefetching batched lookup.
pub(crate) fn mexists<F: Family>(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() < 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let filter = lookup::<F>(&mut key)?;
    ctx.reply_array(args.count() - 2);
    let Some(filter) = filter else {
        (2..args.count()).for_each(|_| ctx.reply_bool(false));
        return Ok(());
    };
    let mut found = [false; BATCH];
    let hasher = filter.hasher();
    for_each_batch(
        args,
        2,
        |item| hasher.hash_bytes(item),
        |_, hashes| {
            filter.contains_hashes(hashes, &mut found[..hashes.len()]);
            for &hit in &found[..hashes.len()] {
                ctx.reply_bool(hit);
            }
            true
        },
    );
    Ok(())
}
