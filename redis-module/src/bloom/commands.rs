//! The BF commands, as RedisBloom answers them (`src/rebloom.c` and its
//! flow tests are the specification; the README lists what differs).

use filterlab_core::BATCH;
use redis_module::raw::RedisModuleCmdFunc;

use crate::bloom::{Added, Bloom};
use crate::ffi::{Args, Ctx, Level, log};
use crate::grammar::{self, Argv, BloomField, BloomParams, EXISTS, NOT_FOUND, Parsed, Refusal};
use crate::keys::{
    BLOOM, Keyed, create_sized, entries, existing, filter_of, filter_or_create, for_each_batch,
    load_chunk_into, options,
};
use crate::stored::{ChunkRefusal, Stored, dump_after};

entries! {
    reserve_entry => reserve,
    add_entry => add,
    madd_entry => madd,
    insert_entry => insert,
    exists_entry => crate::keys::exists::<Bloom>,
    mexists_entry => crate::keys::mexists::<Bloom>,
    card_entry => card,
    info_entry => info,
    debug_entry => debug,
    scandump_entry => scandump,
    loadchunk_entry => loadchunk,
}

/// The BF commands: name after the prefix, entry, flags (RedisBloom's).
pub(crate) const TABLE: &[(&str, RedisModuleCmdFunc, &str)] = &[
    ("RESERVE", Some(reserve_entry), "write deny-oom"),
    ("ADD", Some(add_entry), "write deny-oom"),
    ("MADD", Some(madd_entry), "write deny-oom"),
    ("INSERT", Some(insert_entry), "write deny-oom"),
    ("EXISTS", Some(exists_entry), "readonly fast"),
    ("MEXISTS", Some(mexists_entry), "readonly fast"),
    ("CARD", Some(card_entry), "readonly fast"),
    ("INFO", Some(info_entry), "readonly fast"),
    ("DEBUG", Some(debug_entry), "readonly fast"),
    ("SCANDUMP", Some(scandump_entry), "readonly fast"),
    ("LOADCHUNK", Some(loadchunk_entry), "write deny-oom"),
];

/// A new filter of `params`, once it is known to fit.
fn create(ctx: &Ctx, params: &BloomParams) -> Parsed<Bloom> {
    if params.capped {
        log(Level::Warning, "Error rate is capped at 0.250000");
    }
    let layout = options().bf_layout;
    create_sized(
        ctx,
        Bloom::sizing(params, layout),
        || Bloom::create(params, layout),
        "ERR could not create filter",
    )
}

/// One insert's reply (an error for a refusal).
fn reply_added(ctx: &Ctx, added: Added) {
    match added {
        Added::New => ctx.reply_bool(true),
        Added::Present => ctx.reply_bool(false),
        Added::NonScalingFull => ctx.reply_error("ERR non scaling filter is full"),
        Added::Full => ctx.reply_error("ERR problem inserting into filter"),
    }
}

/// Inserts the items from argument `from` on, replying an array of
/// answers: each batch hashed first, then probed with prefetch. Stops
/// after a non-scaling filter's refusal, as RedisBloom does. Whether the
/// filter changed.
fn insert_items(ctx: &Ctx, bloom: &mut Bloom, args: &Args<'_>, from: usize) -> bool {
    ctx.reply_array_postponed();
    let mut answers = [Added::Present; BATCH];
    let (mut replied, mut changed) = (0, false);
    let hasher = bloom.hasher();
    for_each_batch(
        args,
        from,
        |item| hasher.hash_bytes(item),
        |_, hashes| {
            let answered = bloom.insert_batch(hashes, &mut answers);
            for &added in &answers[..answered] {
                reply_added(ctx, added);
                changed |= added == Added::New;
            }
            replied += answered;
            answered == hashes.len()
        },
    );
    ctx.set_array_len(replied);
    changed
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
fn reserve(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    let params = grammar::bf_reserve(args, options())?;
    let mut key = ctx.open_key(args, 1, true);
    if filter_of::<Bloom>(&mut key)?.is_some() {
        return Err(EXISTS);
    }
    let bloom = create(ctx, &params)?;
    key.set(&BLOOM, Keyed::new(Stored::Ready(bloom)));
    ctx.reply_simple(c"OK");
    ctx.replicate_verbatim();
    Ok(())
}

/// BF.ADD key item: creates the filter with the defaults.
fn add(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, true);
    let defaults = BloomParams::defaults(options());
    let (bloom, created) = filter_or_create(&mut key, || create(ctx, &defaults))?;
    let added = bloom.insert_hash(bloom.hash(args.bytes(2)));
    reply_added(ctx, added);
    if created || added == Added::New {
        ctx.replicate_verbatim();
    }
    Ok(())
}

/// BF.MADD key item [item …]
fn madd(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() < 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, true);
    let defaults = BloomParams::defaults(options());
    let (bloom, created) = filter_or_create(&mut key, || create(ctx, &defaults))?;
    if insert_items(ctx, bloom, args, 2) || created {
        ctx.replicate_verbatim();
    }
    Ok(())
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item …
fn insert(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    let insert = grammar::bf_insert(args, options())?;
    let mut key = ctx.open_key(args, 1, true);
    let (bloom, created) = filter_or_create(&mut key, || {
        if insert.create {
            create(ctx, &insert.params)
        } else {
            Err(NOT_FOUND)
        }
    })?;
    if insert_items(ctx, bloom, args, insert.items) || created {
        ctx.replicate_verbatim();
    }
    Ok(())
}

/// BF.CARD key: 0 for an empty key.
fn card(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 2 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let items = filter_of::<Bloom>(&mut key)?.map_or(0, |bloom| bloom.len());
    ctx.reply_integer(i64::try_from(items).unwrap_or(i64::MAX));
    Ok(())
}

fn reply_field(ctx: &Ctx, value: Option<i64>) {
    match value {
        Some(value) => ctx.reply_integer(value),
        None => ctx.reply_null(),
    }
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]
fn info(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if !(2..=3).contains(&args.count()) {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let bloom = existing::<Bloom>(&mut key)?;
    if args.count() == 3 {
        let field = BloomField::named(args.bytes(2))?;
        if ctx.resp3() {
            ctx.reply_map(1);
            ctx.reply_label(field.label());
        } else {
            ctx.reply_array(1);
        }
        reply_field(ctx, bloom.field(field));
        return Ok(());
    }
    ctx.reply_map(BloomField::ALL.len());
    for field in BloomField::ALL {
        ctx.reply_label(field.label());
        reply_field(ctx, bloom.field(field));
    }
    Ok(())
}

/// BF.DEBUG key: the count, then one line per layer.
fn debug(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 2 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let lines = existing::<Bloom>(&mut key)?.debug();
    ctx.reply_array(lines.len());
    for line in &lines {
        ctx.reply_bulk(line.as_bytes());
    }
    Ok(())
}

/// BF.SCANDUMP key cursor: the chunk after `cursor` and its own cursor;
/// `[0, ""]` past the last.
fn scandump(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 3 {
        return Err(Refusal::Arity);
    }
    let mut key = ctx.open_key(args, 1, false);
    let bloom = existing::<Bloom>(&mut key)?;
    let Some(cursor) = args.integer(2) else {
        return Err(Refusal::text("Second argument must be numeric"));
    };
    let chunk =
        dump_after(bloom, cursor).map_err(|err| Refusal::Text(format!("ERR {err}").into()))?;
    ctx.reply_array(2);
    let (next, bytes) = chunk.unwrap_or_default();
    ctx.reply_integer(i64::try_from(next).unwrap_or(0));
    ctx.reply_bulk(&bytes);
    Ok(())
}

/// BF.LOADCHUNK key cursor chunk: the chunks of a dump, in order; the
/// filter answers once the last one has arrived.
fn loadchunk(ctx: &Ctx, args: &Args<'_>) -> Parsed<()> {
    if args.count() != 4 {
        return Err(Refusal::Arity);
    }
    let Some(cursor) = args.integer(2) else {
        return Err(Refusal::text("ERR Second argument must be numeric"));
    };
    let mut key = ctx.open_key(args, 1, true);
    match load_chunk_into::<Bloom>(&mut key, cursor, args.bytes(3))? {
        Ok(()) => {}
        Err(ChunkRefusal::NotFound) => return Err(NOT_FOUND),
        Err(ChunkRefusal::Exists | ChunkRefusal::Offset) => {
            return Err(Refusal::text("invalid offset - no link found"));
        }
        Err(ChunkRefusal::BadChunk(_)) => return Err(Refusal::text("received bad data")),
        Err(ChunkRefusal::BadDump(err)) => {
            log(
                Level::Warning,
                &format!("BF.LOADCHUNK: the dump does not restore: {err}"),
            );
            ctx.replicate_verbatim();
            return Err(Refusal::text("received bad data"));
        }
    }
    ctx.reply_simple(c"OK");
    ctx.replicate_verbatim();
    Ok(())
}
