//! The module inside the server: its options, its two data types and their
//! callbacks, the command table, and what the BF and CF commands share
//! (opening a key of their type, creating a filter only after its size is
//! known to fit).

use std::ffi::{CStr, CString};
use std::mem::size_of;
use std::sync::OnceLock;

use filterlab_core::{Error, ErrorKind};

use crate::bloom::Bloom;
use crate::cuckoo::Cuckoo;
use crate::ffi::{Aof, Args, Ctx, DataType, Digest, Held, Key, LoadCtx, RdbSink, RdbSource};
use crate::ffi::{Level, TypeCallbacks, log};
use crate::grammar::{Parsed, Refusal, WRONG_TYPE};
use crate::options::Options;
use crate::payload::Sink;
use crate::stored::{FilterValue, Stored, dump_all};
use crate::{bloom, cuckoo};

/// `MODULE LIST`'s version: major·10000 + minor·100 + patch of the crate.
pub(crate) const MODULE_VERSION: i32 = {
    const fn number(text: &str) -> i32 {
        let bytes = text.as_bytes();
        let mut value = 0;
        let mut at = 0;
        while at < bytes.len() {
            value = value * 10 + (bytes[at] - b'0') as i32;
            at += 1;
        }
        value
    }
    number(env!("CARGO_PKG_VERSION_MAJOR")) * 10_000
        + number(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + number(env!("CARGO_PKG_VERSION_PATCH"))
};

/// The data type of BF keys. Its name differs from RedisBloom's
/// (`MBbloom--`), so both modules load side by side, and does not change
/// with the command prefix, so an RDB file loads whatever prefix the
/// module is given.
const BLOOM_TYPE_NAME: &str = "FLTRbloom";
/// The data type of CF keys (RedisBloom's is `MBbloomCF`).
const CUCKOO_TYPE_NAME: &str = "FLTRcucko";
/// The data types' encoding version.
const ENCODING_VERSION: i32 = 1;

pub(crate) static BLOOM: DataType<Stored<Bloom>> = DataType::new();
pub(crate) static CUCKOO: DataType<Stored<Cuckoo>> = DataType::new();

/// What the module was loaded with.
struct Loaded {
    options: Options,
    /// The LOADCHUNK commands AOF rewrite emits, under their prefixes.
    bf_loadchunk: CString,
    cf_loadchunk: CString,
}

static LOADED: OnceLock<Loaded> = OnceLock::new();

fn loaded() -> &'static Loaded {
    LOADED
        .get()
        .expect("commands run only after the module loaded")
}

/// The module's options.
pub(crate) fn options() -> &'static Options {
    &loaded().options
}

/// Reads the module arguments, registers the data types and the commands.
pub(crate) fn on_load(ctx: &LoadCtx, args: &[&[u8]]) -> Result<(), String> {
    let options = Options::parse(args).map_err(|err| err.to_string())?;
    let command = |name: String| CString::new(name).unwrap_or_default();
    let bf_loadchunk = command(options.bf_command("LOADCHUNK"));
    let cf_loadchunk = command(options.cf_command("LOADCHUNK"));
    log(
        Level::Notice,
        &format!(
            "filterlab {}: {}.* and {}.*, {} layers, CF target FPP {}",
            env!("CARGO_PKG_VERSION"),
            options.bf_prefix,
            options.cf_prefix,
            options.bf_layout.name(),
            options.cf_error_rate
        ),
    );
    let loaded = LOADED.get_or_init(|| Loaded {
        options,
        bf_loadchunk,
        cf_loadchunk,
    });
    BLOOM.register(ctx, BLOOM_TYPE_NAME, ENCODING_VERSION)?;
    CUCKOO.register(ctx, CUCKOO_TYPE_NAME, ENCODING_VERSION)?;
    let options = &loaded.options;
    for (suffix, entry, flags) in bloom::commands::TABLE {
        ctx.create_command(&options.bf_command(suffix), *entry, flags)?;
    }
    for (suffix, entry, flags) in cuckoo::commands::TABLE {
        ctx.create_command(&options.cf_command(suffix), *entry, flags)?;
    }
    Ok(())
}

/// What a family's commands need of its filter beyond [`FilterValue`].
pub(crate) trait Family: FilterValue + Clone + 'static {
    /// The data type of its keys.
    fn data_type() -> &'static DataType<Stored<Self>>;
    /// Its LOADCHUNK command, under the module's prefix.
    fn loadchunk() -> &'static CStr;
    /// Bytes it holds in the server's allocator.
    fn allocated_bytes(&self) -> usize;
}

impl Family for Bloom {
    fn data_type() -> &'static DataType<Stored<Self>> {
        &BLOOM
    }
    fn loadchunk() -> &'static CStr {
        &loaded().bf_loadchunk
    }
    fn allocated_bytes(&self) -> usize {
        Bloom::allocated_bytes(self)
    }
}

impl Family for Cuckoo {
    fn data_type() -> &'static DataType<Stored<Self>> {
        &CUCKOO
    }
    fn loadchunk() -> &'static CStr {
        &loaded().cf_loadchunk
    }
    fn allocated_bytes(&self) -> usize {
        Cuckoo::allocated_bytes(self)
    }
}

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

impl<F: Family> TypeCallbacks for Stored<F> {
    fn load(source: &mut RdbSource, version: i32) -> Result<Self, Error> {
        Stored::load(source, version)
    }

    fn save(&self, sink: &mut RdbSink) -> Result<(), Error> {
        Stored::save(self, sink)
    }

    /// LOADCHUNK commands, as RedisBloom's rewrite emits them: a restore
    /// under way as the chunks it holds.
    fn rewrite(&self, aof: &mut Aof) -> Result<(), Error> {
        match self {
            Self::Ready(filter) => {
                dump_all(filter, |cursor, chunk| {
                    aof.emit_chunk(F::loadchunk(), cursor, chunk);
                    Ok(())
                })?;
            }
            Self::Restoring(pending) => {
                for (cursor, chunk) in (1u64..).zip(pending.chunks()) {
                    aof.emit_chunk(F::loadchunk(), cursor, chunk);
                }
            }
        }
        Ok(())
    }

    fn allocated(&self) -> usize {
        match self {
            Self::Ready(filter) => filter.allocated_bytes(),
            Self::Restoring(pending) => size_of::<Self>() + pending.bytes(),
        }
    }

    fn digest(&self, digest: &mut Digest) {
        if let Err(err) = self.save(&mut DigestSink(digest)) {
            log(Level::Warning, &format!("filterlab: DEBUG DIGEST: {err}"));
        }
    }

    fn duplicate(&self) -> Self {
        self.clone()
    }
}

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
        Held::Value(Stored::Ready(filter)) => Ok(Some(filter)),
        Held::Value(Stored::Restoring(pending)) => restoring(pending.progress()),
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
        key.set(F::data_type(), Stored::Ready(filter));
    }
    match filter_of(key)? {
        Some(filter) => Ok((filter, empty)),
        None => Err(Refusal::text("ERR could not create filter")),
    }
}

/// Creates a filter of `bytes` bytes with `create`, after checking that
/// it fits under the server's `maxmemory`; the two refusals in
/// RedisBloom's words (`created` is its text for other failures).
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
    use crate::grammar::Argv;
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
