/**
 * node-redis's client.bf and client.cf (written for RedisBloom) against
 * filterlab-redis-module: the node-redis counterpart of redis_py.py.
 *
 *     mkdir -p /tmp/noderedis && cd /tmp/noderedis && npm install redis@5.12.4
 *     cd /tmp/noderedis && node /path/to/node_redis.mjs PORT
 *
 * `redis` is resolved from the current directory's node_modules, so the
 * script can live anywhere. Pinned to redis@5.12.4 (@redis/bloom 5.12.4),
 * the newest 5.x release.
 *
 * PORT: a redis-server with the module loaded (or RedisBloom, as the
 * reference). Every call goes through the client's own argument building
 * and reply parsing, RESP2 and then RESP3; values are compared strictly, so
 * a reply shape the client does not expect (an integer where it expects a
 * RESP3 boolean, a missing INFO field, a text where it expects a number)
 * fails. Error replies are caught as the client's ErrorReply and compared
 * with RedisBloom's exact text. Prints one line per check; exits 1 if any
 * check failed.
 *
 * node-redis 5.12.4 has no cf.mExists and no one-field BF.INFO form, so
 * neither is checked here.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const { createClient, ErrorReply, RESP_TYPES } = createRequire(join(process.cwd(), 'package.json'))('redis');

/** RedisBloom's INFO labels, in its order. */
const BF_INFO_FIELDS = ['Capacity', 'Size', 'Number of filters', 'Number of items inserted',
  'Expansion rate'];
const CF_INFO_FIELDS = ['Size', 'Number of buckets', 'Number of filters',
  'Number of items inserted', 'Number of items deleted', 'Bucket size', 'Expansion rate',
  'Max iterations'];

let failures = 0;
let passes = 0;

/** Runs one named check and prints its line; a failure does not stop the rest. */
async function check(tag, name, body) {
  try {
    await body();
    passes += 1;
    console.log(`${tag} ok   ${name}`);
  } catch (err) {
    failures += 1;
    const detail = err instanceof assert.AssertionError ? err.message.replace(/\n+/g, ' ') : `${err.constructor.name}: ${err.message}`;
    console.log(`${tag} FAIL ${name}: ${detail}`);
  }
}

/** The call must be refused with an error reply carrying exactly `text`. */
async function rejectsWith(call, text) {
  let result;
  try {
    result = await call();
  } catch (err) {
    assert.ok(err instanceof ErrorReply, `expected ErrorReply, got ${err.constructor.name}: ${err.message}`);
    assert.equal(err.message, text);
    return;
  }
  assert.fail(`expected error reply ${JSON.stringify(text)}, got ${JSON.stringify(result)}`);
}

/**
 * INFO as the client gives it: a plain object by default in both protocols,
 * keyed by label in the server's order. The order is checked too, because
 * node-redis 4.x reads these replies by position.
 */
function assertFields(info, labels) {
  assert.equal(typeof info, 'object');
  assert.deepEqual(Object.keys(info), labels);
  for (const label of labels) {
    assert.equal(typeof info[label], 'number', `${label} is ${JSON.stringify(info[label])}`);
  }
}

/** SCANDUMP through the documented loop, with bulk strings kept as Buffers. */
async function dump(group, key) {
  const chunks = [];
  let iterator = 0;
  for (;;) {
    const reply = await group.scanDump(key, iterator);
    assert.equal(typeof reply.iterator, 'number');
    if (reply.iterator === 0) break;
    assert.ok(Buffer.isBuffer(reply.chunk), 'chunk is not a Buffer');
    chunks.push(reply);
    iterator = reply.iterator;
  }
  return chunks;
}

async function run(resp, port) {
  const tag = `RESP${resp}`;
  const client = createClient({ socket: { port, host: '127.0.0.1' }, RESP: resp });
  client.on('error', (err) => console.log(`${tag} client error: ${err.message}`));
  await client.connect();
  await client.flushAll();
  // Dump chunks are binary: read bulk strings as Buffers, as node-redis's docs advise.
  const binary = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  const { bf, cf } = client;
  const c = (name, body) => check(tag, name, body);

  // ---- BF.* ----
  await c('bf.reserve -> OK', async () => {
    assert.equal(await bf.reserve('bf', 0.01, 1000), 'OK');
  });
  await c('bf.add new item -> true, again -> false', async () => {
    assert.equal(await bf.add('bf', 'foo'), true);
    assert.equal(await bf.add('bf', 'foo'), false);
  });
  await c('bf.mAdd -> [false, true]', async () => {
    assert.deepEqual(await bf.mAdd('bf', ['foo', 'bar']), [false, true]);
  });
  await c('bf.exists present -> true, absent -> false, missing key -> false', async () => {
    assert.equal(await bf.exists('bf', 'bar'), true);
    assert.equal(await bf.exists('bf', 'nope'), false);
    assert.equal(await bf.exists('no-such-key', 'foo'), false);
  });
  await c('bf.mExists -> [true, false]; missing key -> [false, false]', async () => {
    assert.deepEqual(await bf.mExists('bf', ['foo', 'nope']), [true, false]);
    assert.deepEqual(await bf.mExists('no-such-key', ['foo', 'bar']), [false, false]);
  });
  await c('bf.card -> 2; missing key -> 0', async () => {
    assert.equal(await bf.card('bf'), 2);
    assert.equal(await bf.card('no-such-key'), 0);
  });
  await c('bf.info: five fields, capacity 1000, items 2, filters 1, expansion 2, size > 0', async () => {
    const info = await bf.info('bf');
    assertFields(info, BF_INFO_FIELDS);
    assert.deepEqual(
      [info.Capacity, info['Number of items inserted'], info['Number of filters'], info['Expansion rate']],
      [1000, 2, 1, 2]);
    assert.ok(info.Size > 0);
  });
  await c('bf.reserve EXPANSION 4 -> OK, info expansion 4', async () => {
    assert.equal(await bf.reserve('grows', 0.001, 100, { EXPANSION: 4 }), 'OK');
    assert.equal((await bf.info('grows'))['Expansion rate'], 4);
  });
  await c('bf.reserve NONSCALING -> OK, info expansion null', async () => {
    assert.equal(await bf.reserve('fixed', 0.01, 3, { NONSCALING: true }), 'OK');
    const info = await bf.info('fixed');
    assert.deepEqual(Object.keys(info), BF_INFO_FIELDS);
    assert.equal(info['Expansion rate'], null);
    assert.equal(info['Number of filters'], 1);
  });
  await c('bf.add past a NONSCALING capacity -> error "ERR non scaling filter is full"', async () => {
    let added = 0;
    for (let i = 0; added < 3 && i < 100; i += 1) {
      if (await bf.add('fixed', `k${i}`)) added += 1;
    }
    assert.equal(added, 3);
    await rejectsWith(() => bf.add('fixed', 'one-more'), 'ERR non scaling filter is full');
  });
  await c('bf.insert CAPACITY ERROR EXPANSION ITEMS -> [true, true], info capacity 500', async () => {
    assert.deepEqual(
      await bf.insert('ins', ['a', 'b'], { CAPACITY: 500, ERROR: 0.001, EXPANSION: 2 }), [true, true]);
    const info = await bf.info('ins');
    assert.deepEqual([info.Capacity, info['Number of items inserted']], [500, 2]);
  });
  await c('bf.insert NONSCALING -> info expansion null', async () => {
    assert.deepEqual(await bf.insert('ins-fixed', ['a'], { CAPACITY: 10, NONSCALING: true }), [true]);
    assert.equal((await bf.info('ins-fixed'))['Expansion rate'], null);
  });
  await c('bf.insert NOCREATE on a missing key -> error "ERR not found"', async () => {
    await rejectsWith(() => bf.insert('missing', ['a'], { NOCREATE: true }), 'ERR not found');
    assert.equal(await client.exists('missing'), 0);
  });
  await c('bf.reserve on an existing key -> error "ERR item exists"', async () => {
    await rejectsWith(() => bf.reserve('bf', 0.01, 1000), 'ERR item exists');
  });
  await c('bf.reserve error rate 0 / 1 -> error "ERR error rate must be in the range (0.000000, 1.000000)"', async () => {
    await rejectsWith(() => bf.reserve('bad', 0, 100), 'ERR error rate must be in the range (0.000000, 1.000000)');
    await rejectsWith(() => bf.reserve('bad', 1, 100), 'ERR error rate must be in the range (0.000000, 1.000000)');
  });
  await c('bf.reserve capacity 0 -> error "ERR capacity must be in the range [1, 1073741824]"', async () => {
    await rejectsWith(() => bf.reserve('bad', 0.01, 0), 'ERR capacity must be in the range [1, 1073741824]');
  });
  await c('bf.reserve EXPANSION with NONSCALING -> error "Nonscaling filters cannot expand"', async () => {
    await rejectsWith(() => bf.reserve('bad', 0.01, 100, { EXPANSION: 2, NONSCALING: true }),
      'Nonscaling filters cannot expand');
  });
  await c('bf.insert ERROR 0 / EXPANSION -1 / CAPACITY 0 -> "Bad error rate" / "Bad expansion" / "Bad capacity"', async () => {
    await rejectsWith(() => bf.insert('bad', ['a'], { ERROR: 0 }), 'Bad error rate');
    await rejectsWith(() => bf.insert('bad', ['a'], { EXPANSION: -1 }), 'Bad expansion');
    await rejectsWith(() => bf.insert('bad', ['a'], { CAPACITY: 0 }), 'Bad capacity');
    assert.equal(await client.exists('bad'), 0);
  });
  await c('bf.info on a missing key -> error "ERR not found"', async () => {
    await rejectsWith(() => bf.info('no-such-key'), 'ERR not found');
  });
  await c('bf.add on a string key -> WRONGTYPE error', async () => {
    await client.set('plain', 'x');
    await rejectsWith(() => bf.add('plain', 'a'),
      'WRONGTYPE Operation against a key holding the wrong kind of value');
  });
  await c('bf.scanDump / bf.loadChunk round trip into a new key answers identically', async () => {
    const items = Array.from({ length: 200 }, (_, i) => `item-${i}`);
    await bf.mAdd('bf', items.slice(0, 100));
    const chunks = await dump(binary.bf, 'bf');
    assert.ok(chunks.length >= 2, `only ${chunks.length} chunk(s)`);
    for (const { iterator, chunk } of chunks) {
      assert.equal(await binary.bf.loadChunk('copy', iterator, chunk), 'OK');
    }
    const probe = ['foo', 'bar', 'nope', ...items];
    assert.deepEqual(await bf.mExists('copy', probe), await bf.mExists('bf', probe));
    assert.deepEqual((await bf.mExists('copy', items.slice(0, 100))), items.slice(0, 100).map(() => true));
    assert.deepEqual(await bf.info('copy'), await bf.info('bf'));
    assert.equal(await bf.card('copy'), await bf.card('bf'));
  });

  // ---- CF.* ----
  await c('cf.reserve BUCKETSIZE MAXITERATIONS EXPANSION -> OK', async () => {
    assert.equal(await cf.reserve('cf', 1000, { BUCKETSIZE: 4, MAXITERATIONS: 50, EXPANSION: 2 }), 'OK');
  });
  await c('cf.add -> true', async () => {
    assert.equal(await cf.add('cf', 'x'), true);
  });
  await c('cf.addNX present -> false, new -> true', async () => {
    assert.equal(await cf.addNX('cf', 'x'), false);
    assert.equal(await cf.addNX('cf', 'y'), true);
  });
  await c('cf.insert -> [true, true]', async () => {
    assert.deepEqual(await cf.insert('cf', ['z', 'w']), [true, true]);
  });
  // RedisBloom answers CF.INSERTNX with integers in both protocols; node-redis
  // maps them to booleans under RESP2 only.
  const insertNx = resp === 2 ? [false, true] : [0, 1];
  await c(`cf.insertNX [present, new] -> ${JSON.stringify(insertNx)}`, async () => {
    assert.deepEqual(await cf.insertNX('cf', ['z', 'v']), insertNx);
  });
  await c('cf.exists present -> true, absent -> false, missing key -> false', async () => {
    assert.equal(await cf.exists('cf', 'x'), true);
    assert.equal(await cf.exists('cf', 'nope'), false);
    assert.equal(await cf.exists('no-such-key', 'x'), false);
  });
  await c('cf.count -> 1; cf.del -> true; cf.count -> 0; cf.del again -> false', async () => {
    assert.equal(await cf.count('cf', 'x'), 1);
    assert.equal(await cf.del('cf', 'x'), true);
    assert.equal(await cf.count('cf', 'x'), 0);
    assert.equal(await cf.del('cf', 'x'), false);
  });
  await c('cf.count on a missing key -> 0', async () => {
    assert.equal(await cf.count('no-such-key', 'x'), 0);
  });
  await c('cf.info: eight fields, filters 1, inserted 4, deleted 1, bucket 4, expansion 2, iterations 50', async () => {
    const info = await cf.info('cf');
    assertFields(info, CF_INFO_FIELDS);
    assert.deepEqual(
      [info['Number of filters'], info['Number of items inserted'], info['Number of items deleted'],
        info['Bucket size'], info['Expansion rate'], info['Max iterations']],
      [1, 4, 1, 4, 2, 50]);
    assert.ok(info.Size > 0 && info['Number of buckets'] > 0);
  });
  await c('cf.insert CAPACITY creates the key; cf.info after it', async () => {
    assert.deepEqual(await cf.insert('cf-ins', ['a', 'b', 'a'], { CAPACITY: 1000 }), [true, true, true]);
    assert.equal((await cf.info('cf-ins'))['Number of items inserted'], 3);
    assert.equal(await cf.count('cf-ins', 'a'), 2);
  });
  await c('cf.insert NOCREATE on a missing key -> error "ERR not found"', async () => {
    await rejectsWith(() => cf.insert('missing', ['a'], { NOCREATE: true }), 'ERR not found');
  });
  await c('cf.del on a missing key -> error "Not found"', async () => {
    await rejectsWith(() => cf.del('no-such-key', 'x'), 'Not found');
  });
  await c('cf.reserve on an existing key -> error "ERR item exists"', async () => {
    await rejectsWith(() => cf.reserve('cf', 1000), 'ERR item exists');
  });
  await c('cf.reserve BUCKETSIZE 0 -> error "BUCKETSIZE: value must be in the range [1, 255]"', async () => {
    await rejectsWith(() => cf.reserve('bad', 1000, { BUCKETSIZE: 0 }), 'BUCKETSIZE: value must be in the range [1, 255]');
  });
  await c('cf.reserve capacity below 2 * BUCKETSIZE -> error "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"', async () => {
    await rejectsWith(() => cf.reserve('bad', 1, { BUCKETSIZE: 2 }),
      'Capacity must be in the range [2 * BUCKETSIZE, 1073741824]');
  });
  await c('cf.reserve EXPANSION 40000 -> error "EXPANSION: value must be in the range [0, 32768]"', async () => {
    await rejectsWith(() => cf.reserve('bad', 1000, { EXPANSION: 40000 }), 'EXPANSION: value must be in the range [0, 32768]');
  });
  await c('cf.reserve MAXITERATIONS 0 -> error "MAXITERATIONS: value must be in the range [1, 65535]"', async () => {
    await rejectsWith(() => cf.reserve('bad', 1000, { MAXITERATIONS: 0 }), 'MAXITERATIONS: value must be in the range [1, 65535]');
    assert.equal(await client.exists('bad'), 0);
  });
  await c('cf.info on a missing key -> error "ERR not found"', async () => {
    await rejectsWith(() => cf.info('no-such-key'), 'ERR not found');
  });
  await c('cf.add on a bloom key -> WRONGTYPE error', async () => {
    await rejectsWith(() => cf.add('bf', 'a'), 'WRONGTYPE Operation against a key holding the wrong kind of value');
  });
  await c('cf.scanDump / cf.loadChunk round trip into a new key answers identically', async () => {
    const items = Array.from({ length: 200 }, (_, i) => `item-${i}`);
    await cf.insert('cf', items.slice(0, 100));
    const chunks = await dump(binary.cf, 'cf');
    assert.ok(chunks.length >= 1, 'no chunk');
    for (const { iterator, chunk } of chunks) {
      assert.equal(await binary.cf.loadChunk('cfcopy', iterator, chunk), 'OK');
    }
    for (const item of ['x', 'y', 'z', 'w', 'v', 'nope', ...items]) {
      assert.equal(await cf.exists('cfcopy', item), await cf.exists('cf', item), item);
      assert.equal(await cf.count('cfcopy', item), await cf.count('cf', item), item);
    }
    for (const item of ['y', 'z', 'w', 'v', ...items.slice(0, 100)]) {
      assert.equal(await cf.exists('cfcopy', item), true, item);
    }
    assert.deepEqual(await cf.info('cfcopy'), await cf.info('cf'));
  });

  await client.close();
}

const port = Number(process.argv[2]);
if (!Number.isInteger(port)) {
  console.error('usage: node node_redis.mjs PORT');
  process.exit(2);
}
for (const resp of [2, 3]) {
  await run(resp, port);
}
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
