//! The CF commands, as RedisBloom answers them (`src/rebloom.c` and its
//! flow tests are the specification; the README lists what differs).

use filterlab_core::BATCH;
use redis_module::raw::RedisModuleCmdFunc;

use crate::cuckoo::{Cuckoo, Refused};
use crate::ffi::{Args, Ctx, Key, Level, log};
use crate::grammar::{self, Argv, CuckooParams, EXISTS, NOT_FOUND, Parsed, Refusal};
use crate::keys::{
    CUCKOO, Keyed, create_sized, entries, existing, filter_of, filter_or_create, for_each_batch,
    load_chunk_into, lookup, options,
};
use crate::stored::{ChunkRefusal, FilterValue, Stored, dump_after};

entries! {
    reserve_entry => reserve,
    add_entry => add,
    addnx_entry => addnx,
    insert_entry => insert,
    insertnx_entry => insertnx,
    exists_entry => crate::keys::exists::<Cuckoo>,
    mexists_entry => crate::keys::mexists::<Cuckoo>,
    count_entry => count,
    del_entry => del,
    compact_entry => compact,
    info_entry => info,
    debug_entry => debug,
    scandump_entry => scandump,
    loadchunk_entry => loadchunk,
}

/// The CF commands: name after the prefix, entry, flags (RedisBloom's).
pub(crate) const TABLE: &[(&str, RedisModuleCmdFunc, &str)] = &[
    ("RESERVE", Some(reserve_entry), "write deny-oom"),
    ("ADD", Some(add_entry), "write deny-oom"),
    ("ADDNX", Some(addnx_entry), "write deny-oom"),
    ("INSERT", Some(insert_entry), "write deny-oom"),
    ("INSERTNX", Some(insertnx_entry), "write deny-oom"),
    ("EXISTS", Some(exists_entry), "readonly fast"),
    ("MEXISTS", Some(mexists_entry), "readonly fast"),
    ("COUNT", Some(count_entry), "readonly fast"),
    ("DEL", Some(del_entry), "write fast"),
    ("COMPACT", Some(compact_entry), "readonly fast"),
    ("INFO", Some(info_entry), "readonly fast"),
    ("DEBUG", Some(debug_entry), "readonly fast"),
    ("SCANDUMP", Some(scandump_entry), "readonly fast"),
    ("LOADCHUNK", Some(loadchunk_entry), "write deny-oom"),
];

/// Filters at least this large (1 MiB, as the filter's own batched
/// operations decide) get their buckets prefetched before a batch of
/// inserts; smaller ones are in cache.
const PREFETCH_BYTES: usize = 1 << 20;

/// A new filter of `params`, once it is known to fit.
fn create(ctx: &Ctx, params: &CuckooParams) -> Parsed<Cuckoo> {
    let options = options();
    if params.capacity < u64::from(params.bucket_size) * 2 {
        return Err(Refusal::text("ERR Could not create filter"));
    }
    create_sized(
        ctx,
        Cuckoo::sizing(params, options),
        || Cuckoo::create(params, options),
        "ERR Could not create filter",
    )
}

/// The key's filter, created with the defaults and `capacity` when empty.
fn filter_or_default<'k>(
    ctx: &Ctx,
    key: &'k mut Key,
    capacity: u64,
) -> Parsed<(&'k mut Cuckoo, bool)> {
    filter_or_create(key, || {
        create(ctx, &CuckooParams::defaults(options(), capacity))
    })
}

/// The error a single insert replies when refused.
fn refused(refusal: Refused) -> Refusal {
    match refusal {
        Refused::Full => Refusal::text("Filter is full"),
        Refused::MaxExpansions => Refusal::text("Maximum expansions reached"),
    }
}

/// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
fn reserve(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    let params = grammar::cf_reserve(args, options())?;
    let mut key = ctx.open_key(args, 1, true);
    if filter_of::<Cuckoo>(&mut key)?.is_some() {
        return Err(EXISTS);
    }
    let cuckoo = create(ctx, &params)?;
    key.set(&CUCKOO, Keyed::new(Stored::Ready(cuckoo)));
    ctx.reply_simple(c"OK");
    ctx.replicate_verbatim();
    Ok(())
}

/// CF.ADD key item: another copy when present.
fn add(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, true);
    let (cuckoo, created) = filter_or_default(ctx, &mut key, options().cf_initial_size as u64)?;
    let added = cuckoo.insert_hash(cuckoo.hash(args.bytes(2)));
    if created || added.is_ok() {
        ctx.replicate_verbatim();
    }
    added.map_err(refused)?;
    ctx.reply_bool(true);
    Ok(())
}

/// CF.ADDNX key item: only when absent.
fn addnx(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, true);
    let (cuckoo, created) = filter_or_default(ctx, &mut key, options().cf_initial_size as u64)?;
    let added = cuckoo.insert_unique(args.bytes(2));
    if created || added == Ok(true) {
        ctx.replicate_verbatim();
    }
    ctx.reply_bool(added.map_err(refused)?);
    Ok(())
}

/// CF.INSERT and CF.INSERTNX: one answer per item (a refused item is -1,
/// or false for CF.INSERT in RESP3), each batch hashed first and its
/// buckets prefetched.
fn insert_items(ctx: &Ctx, args: &Args<'_>, unique: bool) -> Parsed<()> {
    let insert = grammar::cf_insert(args, options())?;
    let mut key = ctx.open_key(args, 1, true);
    let (cuckoo, created) = if insert.create {
        filter_or_default(ctx, &mut key, insert.capacity)?
    } else {
        (filter_of::<Cuckoo>(&mut key)?.ok_or(NOT_FOUND)?, false)
    };
    ctx.reply_array(args.count() - insert.items);
    let mut changed = created;
    let mut warmed = [false; BATCH];
    let hasher = cuckoo.hasher();
    for_each_batch(
        args,
        insert.items,
        |item| hasher.hash_bytes(item),
        |start, hashes| {
            // In a filter past the caches, the batched lookup prefetches
            // both buckets of every item before the inserts touch them.
            if cuckoo.storage_bytes() >= PREFETCH_BYTES {
                cuckoo.contains_hashes(hashes, &mut warmed[..hashes.len()]);
            }
            for (offset, &hash) in hashes.iter().enumerate() {
                let outcome = if unique {
                    cuckoo.insert_unique(args.bytes(start + offset))
                } else {
                    cuckoo.insert_hash(hash).map(|()| true)
                };
                match outcome {
                    Ok(added) => {
                        changed |= added || !unique;
                        if unique {
                            ctx.reply_integer(i64::from(added));
                        } else {
                            ctx.reply_bool(true);
                        }
                    }
                    Err(_) if ctx.resp3() && !unique => ctx.reply_bool(false),
                    Err(_) => ctx.reply_integer(-1),
                }
            }
            true
        },
    );
    if changed {
        ctx.replicate_verbatim();
    }
    Ok(())
}

/// CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item …
fn insert(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    insert_items(ctx, args, false)
}

/// CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item …
fn insertnx(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    insert_items(ctx, args, true)
}

/// CF.COUNT key item: the copies the filter may hold.
fn count(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let copies = lookup::<Cuckoo>(&mut key)?.map_or(0, |cuckoo| cuckoo.count(args.bytes(2)));
    ctx.reply_integer(i64::try_from(copies).unwrap_or(i64::MAX));
    Ok(())
}

/// CF.DEL key item: one copy.
fn del(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, true);
    let Ok(Some(cuckoo)) = filter_of::<Cuckoo>(&mut key) else {
        return Err(Refusal::text("Not found"));
    };
    let removed = cuckoo.remove_hash(cuckoo.hash(args.bytes(2)));
    if removed {
        ctx.replicate_verbatim();
    }
    ctx.reply_bool(removed);
    Ok(())
}

/// CF.COMPACT key: filterlab's cuckoo filter keeps no deleted entries to
/// reclaim, so there is nothing to do.
fn compact(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 2 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, true);
    if !matches!(filter_of::<Cuckoo>(&mut key), Ok(Some(_))) {
        return Err(Refusal::text("Cuckoo filter was not found"));
    }
    ctx.reply_simple(c"OK");
    Ok(())
}

/// CF.INFO key
fn info(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 2 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let fields = existing::<Cuckoo>(&mut key)?.info();
    ctx.reply_map(fields.len());
    for (label, value) in fields {
        ctx.reply_label(label);
        ctx.reply_integer(value);
    }
    Ok(())
}

/// CF.DEBUG key
fn debug(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 2 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let line = existing::<Cuckoo>(&mut key)?.debug();
    ctx.reply_bulk(line.as_bytes());
    Ok(())
}

/// CF.SCANDUMP key cursor: the chunk after `cursor` and its own cursor;
/// `[0, nil]` past the last, and for a filter without items.
fn scandump(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let Some(cursor) = args.integer(2).filter(|&cursor| cursor >= 0) else {
        return Err(Refusal::text("Invalid position"));
    };
    let mut key = ctx.open_key(args, 1, false);
    let cuckoo = existing::<Cuckoo>(&mut key)?;
    let chunk =
        dump_after(cuckoo, cursor).map_err(|err| Refusal::Text(format!("ERR {err}").into()))?;
    ctx.reply_array(2);
    if let Some((next, bytes)) = chunk {
        ctx.reply_integer(i64::try_from(next).unwrap_or(0));
        ctx.reply_bulk(&bytes);
    } else {
        ctx.reply_integer(0);
        ctx.reply_null();
    }
    Ok(())
}

/// CF.LOADCHUNK key cursor chunk: the chunks of a dump, in order; the
/// filter answers once the last one has arrived.
fn loadchunk(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 4 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, true);
    let Some(cursor) = args.integer(2).filter(|&cursor| cursor != 0) else {
        return Err(Refusal::text("Invalid position"));
    };
    match load_chunk_into::<Cuckoo>(&mut key, cursor, args.bytes(3))? {
        Ok(()) => {}
        Err(ChunkRefusal::NotFound) => return Err(NOT_FOUND),
        Err(ChunkRefusal::Exists) => return Err(EXISTS),
        Err(ChunkRefusal::BadChunk(_)) if cursor == 1 => {
            return Err(Refusal::text("Couldn't create filter!"));
        }
        Err(ChunkRefusal::Offset | ChunkRefusal::BadChunk(_)) => {
            return Err(Refusal::text("Couldn't load chunk!"));
        }
        Err(ChunkRefusal::BadDump(err)) => {
            log(
                Level::Warning,
                &format!("CF.LOADCHUNK: the dump does not restore: {err}"),
            );
            ctx.replicate_verbatim();
            return Err(Refusal::text("Couldn't load chunk!"));
        }
    }
    ctx.reply_simple(c"OK");
    ctx.replicate_verbatim();
    Ok(())
}
