//! The Lua scripts: one per operation, each a single atomic step on the
//! server, and the EVALSHA call that runs them (loading a script the server
//! does not have and trying again).
//!
//! Two families share the bodies: a plain filter's scripts and a shard's
//! (a shard of a sharded filter is a plain filter whose configuration has
//! three more fields, [`SHARD_FIELDS`]). Every script but the ones that
//! create a filter starts by comparing the stored configuration with the
//! caller's (ARGV[1..NFIELDS], in the order of its family's fields) and
//! refuses to act on any difference; each bit array key it touches is
//! first checked to be a string of its configured length. KEYS[1] is the
//! configuration hash, KEYS[2..] the parts in order.
//!
//! The marker scripts act on a sharded filter's marker alone (see
//! `sharded.rs`).

use std::sync::LazyLock;

use redis::{Cmd, ConnectionLike, FromRedisValue, RedisResult, Script, ToRedisArgs};

use crate::error::{CODE_DAMAGED, CODE_DRIFT, CODE_EXISTS, CODE_INCOMPLETE, CODE_NO_FILTER};
use crate::layout::{CHECKED_FIELDS, ITEMS_FIELD, SHARD_FIELDS, SIZING_FIELDS};
use crate::shards::MARKER_FIELDS;

/// What every script starts with, the marker's included: the error helper
/// and the configuration check (fails unless fields names[i] of the hash at
/// KEYS[1] equal ARGV[i]; a hash that does not exist is `NO_FILTER`).
const CHECKS: &str = r"
local function fail(code, message)
  error({err = code .. ' ' .. message})
end
local function compare(names)
  local stored = redis.call('HMGET', KEYS[1], unpack(names))
  if not stored[1] and redis.call('EXISTS', KEYS[1]) == 0 then
    fail(NO_FILTER, 'no filter: ' .. KEYS[1] .. ' does not exist')
  end
  for i = 1, #names do
    if stored[i] ~= ARGV[i] then
      fail(DRIFT, KEYS[1] .. ' holds ' .. names[i] .. ' = ' .. (stored[i] or 'nothing')
        .. ', this client expects ' .. ARGV[i])
    end
  end
end
";

/// What every filter script adds: the sizes of the parts and the location
/// of a bit offset.
const PROLOGUE: &str = r"
local NFIELDS = #FIELDS

local num_bits = tonumber(ARGV[2])
local part_bits = tonumber(ARGV[6])
local parts = tonumber(ARGV[7])
local part_bytes = part_bits / 8
local total_bytes = math.ceil(num_bits / 64) * 8

-- Bytes of part p (counted from 0).
local function part_len(p)
  if p < parts - 1 then return part_bytes end
  return total_bytes - (parts - 1) * part_bytes
end

-- The key of part p, checked once per call to be a string of its length.
local checked = {}
local function part(p)
  local key = KEYS[p + 2]
  if not checked[p] then
    local len = redis.call('STRLEN', key)
    if len ~= part_len(p) then
      fail(DAMAGED, key .. ' is ' .. len .. ' bytes, the configuration says ' .. part_len(p))
    end
    checked[p] = true
  end
  return key
end

local function check_parts()
  for p = 0, parts - 1 do part(p) end
end

-- Arguments per BITFIELD call at most: below the 8000 values Lua's unpack
-- can push.
local MAX_ARGS = 7800

-- The argument list of a BITFIELD call of up to `count` subcommands `op u1
-- <offset> [value]`, its width and its most subcommands per call: only
-- the offsets change between calls.
local function template(op, value, count)
  local args, width = {}, value and 4 or 3
  local chunk = math.floor(MAX_ARGS / width)
  for j = 0, math.min(count, chunk) - 1 do
    args[width * j + 1] = op
    args[width * j + 2] = 'u1'
    if value then args[width * j + 4] = value end
  end
  return {args = args, width = width, chunk = chunk}
end

-- Runs `command` (BITFIELD or BITFIELD_RO) on `key` with the template's
-- subcommand at each of offsets[from..to], as few calls as the template
-- allows; returns the replies (the bits, old ones for SET) in order. Counts
-- are kept by hand: Lua's # is a binary search.
local function bitfield(key, command, t, offsets, from, to)
  local args, width = t.args, t.width
  local bits, stored = nil, 0
  while from <= to do
    local last = math.min(from + t.chunk - 1, to)
    local n = 0
    for j = from, last do
      args[n + 3] = offsets[j]
      n = n + width
    end
    local reply = redis.call(command, key, unpack(args, 1, n))
    if not bits then
      bits = reply
    else
      for i = 1, last - from + 1 do bits[stored + i] = reply[i] end
    end
    stored = stored + last - from + 1
    from = last + 1
  end
  return bits or {}
end

-- The bits at the bit offsets offsets[from..to] over the concatenated
-- parts, in order: read (a GET template) or set (a SET template, the old
-- bits returned). The offsets are grouped by part, one BITFIELD per part
-- and CHUNK offsets, and every part touched is checked before the first
-- command runs, so a refused call writes nothing (Redis does not roll a
-- failed script back).
local function probe(offsets, from, to, command, t)
  if parts == 1 then return bitfield(part(0), command, t, offsets, from, to) end
  local lists, counts, where, at = {}, {}, {}, {}
  for j = from, to do
    local global = tonumber(offsets[j])
    local p = math.floor(global / part_bits)
    local list = lists[p]
    if not list then
      part(p)
      list = {}
      lists[p] = list
      counts[p] = 0
    end
    local count = counts[p] + 1
    counts[p] = count
    list[count] = global - p * part_bits
    where[j] = p
    at[j] = count
  end
  local replies, bits = {}, {}
  for p, list in pairs(lists) do
    replies[p] = bitfield(KEYS[p + 2], command, t, list, 1, counts[p])
  end
  for j = from, to do bits[j - from + 1] = replies[where[j]][at[j]] end
  return bits
end

-- Writes the configuration (ARGV[1..#ALL_FIELDS]) and the counter.
local function write_config(items)
  local args = {}
  for i = 1, #ALL_FIELDS do
    args[#args + 1] = ALL_FIELDS[i]
    args[#args + 1] = ARGV[i]
  end
  args[#args + 1] = ITEMS
  args[#args + 1] = items
  redis.call('HSET', KEYS[1], unpack(args))
end

-- Creates every part, zeroed, in full, after checking that they fit under
-- the server's maxmemory when it evicts nothing: a running script may
-- exceed it, and a filter allocated past it would leave the server refusing
-- every write. (Under an eviction policy, Redis makes room by evicting.)
local function create_parts()
  local info = redis.call('INFO', 'memory')
  local limit = tonumber(string.match(info, 'maxmemory:(%d+)') or '0')
  if limit > 0 and string.match(info, 'maxmemory_policy:(%S+)') == 'noeviction' then
    local used = tonumber(string.match(info, 'used_memory:(%d+)') or '0')
      - tonumber(string.match(info, 'mem_not_counted_for_evict:(%d+)') or '0')
    if used + total_bytes > limit then
      error({err = 'OOM this filter needs ' .. total_bytes .. ' bytes, the server has '
        .. math.max(limit - used, 0) .. ' of its maxmemory (' .. limit .. ') left'})
    end
  end
  for p = 0, parts - 1 do
    redis.call('SETRANGE', KEYS[p + 2], part_len(p) - 1, '\0')
  end
end

-- Fails unless every upload of an import (KEYS[parts + 2 ..]) is there, whole.
local function check_uploads()
  for p = 0, parts - 1 do
    local upload = KEYS[parts + 2 + p]
    local len = redis.call('STRLEN', upload)
    if len ~= part_len(p) then
      fail(DAMAGED, 'import: ' .. upload .. ' is ' .. len .. ' bytes of ' .. part_len(p) .. ' (expired?)')
    end
  end
end

-- Moves the uploads into place and writes the configuration with the counter.
local function publish_uploads(items)
  for p = 0, parts - 1 do
    redis.call('RENAME', KEYS[parts + 2 + p], KEYS[p + 2])
    redis.call('PERSIST', KEYS[p + 2])
  end
  write_config(items)
end

-- Fails when a key of the filter's layout exists.
local function refuse_existing()
  for i = 1, parts + 1 do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      fail(EXISTS, KEYS[i] .. ' exists')
    end
  end
end
";

/// Creates the filter (zeroed parts, then the configuration) unless it
/// exists; an existing one must have exactly this configuration and intact
/// parts. ARGV[8..9]: the sizing fields. Returns 1 when it created the filter.
const INIT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  compare(ALL_FIELDS)
  check_parts()
  return 0
end
refuse_existing()
create_parts()
write_config(0)
return 1
";

/// Publishes an import: KEYS[parts + 2 ..] are the uploaded parts, renamed
/// into place with the configuration written in the same step, so a filter
/// is never seen half imported. ARGV[8..9]: the sizing fields; ARGV[10]: the counter.
const IMPORT: &str = r"
refuse_existing()
check_uploads()
publish_uploads(ARGV[#ALL_FIELDS + 1])
return 1
";

/// Sets the bits of keys given as k Redis bit offsets each (ARGV[8..]);
/// returns one byte per key, '1' when one of its bits was clear (it was
/// new), else '0', and adds the number of new keys to the counter. A key's
/// bits are set in order, after those of the keys before it (BITFIELD runs
/// its subcommands in order), so a key repeated in a batch counts once, as
/// with one call per key.
const INSERT: &str = r"
compare(FIELDS)
local k = tonumber(ARGV[3])
local set = template('SET', '1', #ARGV - NFIELDS)
local old = probe(ARGV, NFIELDS + 1, #ARGV, 'BITFIELD', set)
local answers = {}
local new = 0
for i = 1, #ARGV - NFIELDS, k do
  local fresh = '0'
  for j = i, i + k - 1 do
    if old[j] == 0 then
      fresh = '1'
      new = new + 1
      break
    end
  end
  answers[(i - 1) / k + 1] = fresh
end
if new > 0 then redis.call('HINCRBY', KEYS[1], ITEMS, new) end
return table.concat(answers)
";

/// Tests keys given as k Redis bit offsets each, round-major: probe 0 of
/// every key, then probe 1 of every key, ... (ARGV[8..]); returns one byte
/// per key, '1' when all its bits are set, else '0'. Batches of 32 keys or
/// more read probe 0 of every key first: when more than 3/4 of the keys
/// are still possibly present, the other probes of every key in one pass
/// (a filter at its capacity has about half its bits set); otherwise one round
/// per probe over the keys not yet found absent, so that an absent key
/// costs about two reads (it stops at its first clear bit) instead of k.
const CONTAINS: &str = r"
compare(FIELDS)
local k = tonumber(ARGV[3])
local first = NFIELDS + 1
local keys = (#ARGV - NFIELDS) / k
local get = template('GET', nil, keys * k)
local answers = {}
-- Whether key i's probes from round `from` on are all set in `bits`,
-- which holds rounds `from`.. of every key.
local function all_set(bits, i, from)
  for r = 0, k - 1 - from do
    if bits[r * keys + i] == 0 then return false end
  end
  return true
end
if keys < 32 then
  local bits = probe(ARGV, first, #ARGV, 'BITFIELD_RO', get)
  for i = 1, keys do answers[i] = all_set(bits, i, 0) and '1' or '0' end
  return table.concat(answers)
end
local bits = probe(ARGV, first, first + keys - 1, 'BITFIELD_RO', get)
local alive, left = {}, 0
for i = 1, keys do
  answers[i] = '0'
  if bits[i] == 1 then
    left = left + 1
    alive[left] = i
  end
end
if k > 1 and left * 4 > keys * 3 then
  local rest = probe(ARGV, first + keys, #ARGV, 'BITFIELD_RO', get)
  for a = 1, left do
    local i = alive[a]
    if all_set(rest, i, 1) then answers[i] = '1' end
  end
  return table.concat(answers)
end
local offsets = {}
for r = 1, k - 1 do
  if left == 0 then break end
  for a = 1, left do offsets[a] = ARGV[first + r * keys + alive[a] - 1] end
  bits = probe(offsets, 1, left, 'BITFIELD_RO', get)
  local kept = 0
  for a = 1, left do
    if bits[a] == 1 then
      kept = kept + 1
      alive[kept] = alive[a]
    end
  end
  left = kept
end
for a = 1, left do answers[alive[a]] = '1' end
return table.concat(answers)
";

/// The counter, the bits set (counted when ARGV[8] is 'bits', else -1) and
/// the configuration's time to live in ms (PTTL).
const READ: &str = r"
compare(FIELDS)
check_parts()
local set_bits = -1
if ARGV[NFIELDS + 1] == 'bits' then
  set_bits = 0
  for p = 0, parts - 1 do
    set_bits = set_bits + redis.call('BITCOUNT', KEYS[p + 2])
  end
end
return {redis.call('HGET', KEYS[1], ITEMS), set_bits, redis.call('PTTL', KEYS[1])}
";

/// Bytes ARGV[9]..=ARGV[10] of part ARGV[8].
const RANGE: &str = r"
compare(FIELDS)
return redis.call('GETRANGE', part(tonumber(ARGV[NFIELDS + 1])), ARGV[NFIELDS + 2], ARGV[NFIELDS + 3])
";

/// Deletes the configuration and every part: those of this configuration,
/// or, when the configuration is gone, whatever parts remain. Returns the
/// number of keys deleted.
const DELETE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then compare(FIELDS) end
return redis.call('DEL', unpack(KEYS))
";

/// Renames the configuration and every part to the keys KEYS[parts + 2 ..]
/// (the new name's, config first), refusing when any of them exists.
const RENAME: &str = r"
compare(FIELDS)
check_parts()
local n = parts + 1
for i = 1, n do
  if redis.call('EXISTS', KEYS[n + i]) == 1 then
    fail(EXISTS, KEYS[n + i] .. ' exists')
  end
end
for i = 1, n do
  redis.call('RENAME', KEYS[i], KEYS[n + i])
end
return 1
";

/// Sets the time to live of the configuration and every part to ARGV[8]
/// ms, or their deadline to ARGV[8] = '@<unix ms>', or removes it when
/// ARGV[8] is 'persist'. The deadline is computed once from the server
/// clock and set with PEXPIREAT, so every key gets the same one (a relative
/// PEXPIRE per key may land a millisecond apart).
const EXPIRE: &str = r"
compare(FIELDS)
check_parts()
local ttl = ARGV[NFIELDS + 1]
local deadline
if string.sub(ttl, 1, 1) == '@' then
  deadline = string.sub(ttl, 2)
elseif ttl ~= 'persist' then
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  deadline = string.format('%.0f', now_ms + tonumber(ttl))
end
for i = 1, #KEYS do
  if deadline then
    redis.call('PEXPIREAT', KEYS[i], deadline)
  else
    redis.call('PERSIST', KEYS[i])
  end
end
return 1
";

/// Creates a shard unless it holds exactly this configuration and epoch
/// (ARGV[1..10], sizing ARGV[11..12]) with intact parts, replacing whatever
/// its keys hold (another creation's shard, parts of a half-deleted one):
/// the caller holds the filter's creation lease, so no live filter owns
/// them. Returns 1 when it created the shard.
const SHARD_INIT: &str = r"
local function kind(key) return redis.call('TYPE', key)['ok'] end
if kind(KEYS[1]) == 'hash' then
  local stored = redis.call('HMGET', KEYS[1], unpack(ALL_FIELDS))
  local same = true
  for i = 1, #ALL_FIELDS do
    if stored[i] ~= ARGV[i] then same = false end
  end
  for p = 0, parts - 1 do
    if kind(KEYS[p + 2]) ~= 'string' or redis.call('STRLEN', KEYS[p + 2]) ~= part_len(p) then
      same = false
    end
  end
  if same then return 0 end
end
redis.call('DEL', unpack(KEYS))
create_parts()
write_config(0)
return 1
";

/// Publishes one shard of an import: as [`IMPORT`], but replacing whatever
/// the shard's keys hold (the caller holds the creation lease).
const SHARD_IMPORT: &str = r"
check_uploads()
redis.call('DEL', unpack(KEYS, 1, parts + 1))
publish_uploads(ARGV[#ALL_FIELDS + 1])
return 1
";

/// Writes bytes ARGV[2] at offset ARGV[1] of an upload key and sets its
/// time to live to ARGV[3] ms, in one step (no configuration: the key is
/// not part of a filter yet).
pub(crate) static UPLOAD_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "redis.call('SETRANGE', KEYS[1], ARGV[1], ARGV[2])\n\
         redis.call('PEXPIRE', KEYS[1], ARGV[3])\nreturn 1",
    )
});

/// Step one of creating a sharded filter. A marker that exists must hold
/// this configuration; returns {state, epoch, ms left of its lease} with
/// state 'ready' or 'creating' (a delete under way fails). An absent one is
/// written, state 'creating' with epoch ARGV[#CONFIG + 1] and a lease of
/// ARGV[#CONFIG + 2] ms: returns {'create', epoch, lease}.
const BEGIN: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  compare(CONFIG)
  local state = redis.call('HGET', KEYS[1], 'state')
  if state ~= 'ready' and state ~= 'creating' then
    fail(INCOMPLETE, KEYS[1] .. ' is being deleted, or a delete stopped half-way: delete it again')
  end
  return {state, redis.call('HGET', KEYS[1], 'epoch'), redis.call('PTTL', KEYS[1])}
end
local args = {}
for i = 1, #CONFIG do
  args[2 * i - 1] = CONFIG[i]
  args[2 * i] = ARGV[i]
end
local epoch, lease = ARGV[#CONFIG + 1], ARGV[#CONFIG + 2]
redis.call('HSET', KEYS[1], 'epoch', epoch, 'state', 'creating', unpack(args))
redis.call('PEXPIRE', KEYS[1], lease)
return {'create', epoch, lease}
";

/// Renews the creation lease of epoch ARGV[1] to ARGV[2] ms, or, when
/// ARGV[2] is 'ready', ends the creation: state 'ready', no time to live.
/// Fails when the lease was lost (expired, or another client took over).
const LEASE: &str = r"
local state, epoch = unpack(redis.call('HMGET', KEYS[1], 'state', 'epoch'))
if state ~= 'creating' or epoch ~= ARGV[1] then
  fail(INCOMPLETE, 'the creation lease on ' .. KEYS[1] .. ' was lost (it expired, or another client took over)')
end
if ARGV[2] == 'ready' then
  redis.call('HSET', KEYS[1], 'state', 'ready')
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
";

/// Step one of deleting: the marker of epoch ARGV[1] (any when empty) is
/// set to state 'deleting' and kept until the last step, so that no client
/// opens or re-creates the filter meanwhile. Returns 0 when there is no
/// marker; fails when it is another creation's.
const MARK_DELETING: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if ARGV[1] ~= '' and epoch ~= ARGV[1] then
  fail(DRIFT, KEYS[1] .. ' is another filter now (epoch ' .. tostring(epoch) .. ', this client has ' .. ARGV[1] .. ')')
end
redis.call('HSET', KEYS[1], 'state', 'deleting')
redis.call('PERSIST', KEYS[1])
return 1
";

/// The last step of deleting: removes the marker if it is still this
/// delete's (state 'deleting', epoch ARGV[1] or any when empty).
const DROP_MARKER: &str = r"
local state, epoch = unpack(redis.call('HMGET', KEYS[1], 'state', 'epoch'))
if state == 'deleting' and (ARGV[1] == '' or epoch == ARGV[1]) then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// Sets the marker of epoch ARGV[1] (state 'ready') to expire at
/// ARGV[2] = '@<unix ms>', or removes its time to live ('persist').
const MARKER_EXPIRE: &str = r"
local state, epoch = unpack(redis.call('HMGET', KEYS[1], 'state', 'epoch'))
if not state then fail(NO_FILTER, 'no filter: ' .. KEYS[1] .. ' does not exist') end
if state ~= 'ready' or epoch ~= ARGV[1] then
  fail(DRIFT, KEYS[1] .. ' is not this filter (state ' .. state .. ', epoch ' .. tostring(epoch) .. ')')
end
if ARGV[2] == 'persist' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIREAT', KEYS[1], string.sub(ARGV[2], 2))
end
return 1
";

/// The shared constants of a script: its family's field lists, the error
/// codes, [`CHECKS`], then `prologue` and `body`.
fn source(fields: &[&str], prologue: &str, body: &str) -> String {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|name| format!("'{name}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let all: Vec<&str> = fields.iter().chain(&SIZING_FIELDS).copied().collect();
    format!(
        "local FIELDS = {{{}}}\nlocal ALL_FIELDS = {{{}}}\nlocal CONFIG = {{{}}}\n\
         local ITEMS = '{ITEMS_FIELD}'\n\
         local DRIFT, NO_FILTER, DAMAGED, EXISTS, INCOMPLETE = '{CODE_DRIFT}', '{CODE_NO_FILTER}', \
         '{CODE_DAMAGED}', '{CODE_EXISTS}', '{CODE_INCOMPLETE}'\n{CHECKS}{prologue}{body}",
        list(fields),
        list(&all),
        list(&MARKER_FIELDS),
    )
}

/// The scripts of one family: a plain filter's, or a shard's.
pub(crate) struct Scripts {
    pub(crate) init: Script,
    pub(crate) import: Script,
    pub(crate) insert: Script,
    pub(crate) contains: Script,
    pub(crate) read: Script,
    pub(crate) range: Script,
    pub(crate) delete: Script,
    pub(crate) rename: Script,
    pub(crate) expire: Script,
}

impl Scripts {
    fn new(fields: &[&str], init: &str, import: &str) -> Self {
        let script = |body: &str| Script::new(&source(fields, PROLOGUE, body));
        Self {
            init: script(init),
            import: script(import),
            insert: script(INSERT),
            contains: script(CONTAINS),
            read: script(READ),
            range: script(RANGE),
            delete: script(DELETE),
            rename: script(RENAME),
            expire: script(EXPIRE),
        }
    }
}

/// A plain filter's scripts.
pub(crate) static PLAIN: LazyLock<Scripts> =
    LazyLock::new(|| Scripts::new(&CHECKED_FIELDS, INIT, IMPORT));

/// A shard's scripts.
pub(crate) static SHARD: LazyLock<Scripts> =
    LazyLock::new(|| Scripts::new(&SHARD_FIELDS, SHARD_INIT, SHARD_IMPORT));

/// The scripts on a sharded filter's marker.
pub(crate) struct MarkerScripts {
    pub(crate) begin: Script,
    pub(crate) lease: Script,
    pub(crate) mark_deleting: Script,
    pub(crate) drop: Script,
    pub(crate) expire: Script,
}

/// The marker's scripts.
pub(crate) static MARKER: LazyLock<MarkerScripts> = LazyLock::new(|| {
    let script = |body: &str| Script::new(&source(&[], "", body));
    MarkerScripts {
        begin: script(BEGIN),
        lease: script(LEASE),
        mark_deleting: script(MARK_DELETING),
        drop: script(DROP_MARKER),
        expire: script(MARKER_EXPIRE),
    }
});

/// One script call: EVALSHA with its keys and arguments, built into one
/// command buffer (no allocation per argument, which matters for batches
/// of 65,536 bit offsets).
pub(crate) struct Call {
    /// The script, or none for a plain command.
    script: Option<&'static Script>,
    cmd: Cmd,
}

impl Call {
    /// A call of `script` on `keys`.
    pub(crate) fn new(script: &'static Script, keys: &[String]) -> Self {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(script.get_hash()).arg(keys.len()).arg(keys);
        Self {
            script: Some(script),
            cmd,
        }
    }

    /// A plain command, to run among script calls.
    pub(crate) fn command(cmd: Cmd) -> Self {
        Self { script: None, cmd }
    }

    /// Appends an argument (ARGV).
    pub(crate) fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        self.cmd.arg(arg);
        self
    }

    /// The EVALSHA command.
    pub(crate) fn cmd(&self) -> &Cmd {
        &self.cmd
    }

    /// Runs the call; when the server does not have the script (a restart,
    /// SCRIPT FLUSH, a node that joined), loads it (on every node of a
    /// cluster) and runs the call again.
    pub(crate) fn invoke<T: FromRedisValue>(&self, con: &mut dyn ConnectionLike) -> RedisResult<T> {
        match (self.cmd.query(con), self.script) {
            (Err(err), Some(script))
                if err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
            {
                script.load(con)?;
                self.cmd.query(con)
            }
            (result, _) => result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_every_field_and_code() {
        let source = source(&CHECKED_FIELDS, PROLOGUE, INSERT);
        assert!(source.starts_with(
            "local FIELDS = {'version', 'num_bits', 'num_hashes', 'hasher', 'seed', 'part_bits', 'parts'}\n"
        ));
        assert!(source.contains("'capacity', 'target_fpp'}"));
        assert!(
            source.contains("'FLDRIFT', 'FLNOFILTER', 'FLDAMAGED', 'FLEXISTS', 'FLINCOMPLETE'")
        );
        // ARGV[2], ARGV[3], ARGV[6], ARGV[7] in the scripts are these fields,
        // in both families.
        for fields in [&CHECKED_FIELDS[..], &SHARD_FIELDS[..]] {
            assert_eq!(
                [fields[1], fields[2], fields[5], fields[6]],
                ["num_bits", "num_hashes", "part_bits", "parts"]
            );
        }
    }

    #[test]
    fn scripts_differ() {
        let mut hashes = std::collections::HashSet::new();
        for family in [&*PLAIN, &*SHARD] {
            for script in [
                &family.init,
                &family.import,
                &family.insert,
                &family.contains,
                &family.read,
                &family.range,
                &family.delete,
                &family.rename,
                &family.expire,
            ] {
                hashes.insert(script.get_hash().to_owned());
            }
        }
        for script in [
            &MARKER.begin,
            &MARKER.lease,
            &MARKER.mark_deleting,
            &MARKER.drop,
            &MARKER.expire,
            &*UPLOAD_SCRIPT,
        ] {
            hashes.insert(script.get_hash().to_owned());
        }
        assert_eq!(hashes.len(), 24);
    }
}
