//! Persistence and the key commands: SAVE and restart, BGREWRITEAOF (the
//! type's AOF rewrite) and restart, DEBUG RELOAD, COPY, RENAME, EXPIRE,
//! DEL; MEMORY USAGE against what DEL releases; `maxmemory`; a damaged
//! RDB payload refused with a log line, the server still up.

use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::{Connection, Value};

use crate::{connect, error, insert_all, int, items, module_args, ok, run, start_with};

/// Filters of every kind and state, under known keys: grown and
/// non-scaling BF, growing and fixed CF with deletions, a restore under
/// way, a key with a TTL.
pub(crate) fn populate(con: &mut Connection) {
    ok(con, "BF.RESERVE bf:grown 0.01 1000");
    insert_all(con, &["BF.MADD", "bf:grown"], &items("a", 0..6000));
    ok(con, "BF.RESERVE bf:fixed 0.001 2000 NONSCALING");
    insert_all(con, &["BF.MADD", "bf:fixed"], &items("b", 0..1500));
    ok(con, "CF.RESERVE cf:grown 500 EXPANSION 2");
    insert_all(
        con,
        &["CF.INSERT", "cf:grown", "ITEMS"],
        &items("c", 0..5000),
    );
    for i in 0..300 {
        int(con, &format!("CF.DEL cf:grown c{i}"));
    }
    ok(
        con,
        "CF.RESERVE cf:fixed 1000 EXPANSION 0 BUCKETSIZE 4 MAXITERATIONS 50",
    );
    insert_all(
        con,
        &["CF.INSERT", "cf:fixed", "ITEMS"],
        &items("d", 0..800),
    );
    int(con, "CF.ADD cf:fixed d1");
    let (_, first): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
        .arg("bf:grown")
        .arg(0)
        .query(con)
        .unwrap();
    let loaded: Value = redis::cmd("BF.LOADCHUNK")
        .arg("bf:restoring")
        .arg(1)
        .arg(first)
        .query(con)
        .unwrap();
    assert_eq!(loaded, Value::Okay);
    ok(con, "BF.RESERVE bf:ttl 0.01 100");
    int(con, "EXPIRE bf:ttl 100000");
}

/// Everything a client can observe of the keys [`populate`] made.
pub(crate) fn snapshot(con: &mut Connection) -> Vec<Value> {
    let probes: Vec<Vec<u8>> = ["a", "b", "c", "d", "z"]
        .iter()
        .flat_map(|prefix| items(prefix, 0..2000))
        .collect();
    let mut seen = Vec::new();
    for key in ["bf:grown", "bf:fixed", "bf:ttl"] {
        seen.push(run(con, &format!("BF.INFO {key}")).unwrap());
        seen.push(run(con, &format!("BF.CARD {key}")).unwrap());
        seen.push(
            redis::cmd("BF.MEXISTS")
                .arg(key)
                .arg(&probes)
                .query(con)
                .unwrap(),
        );
        seen.push(run(con, &format!("DEBUG DIGEST-VALUE {key}")).unwrap());
    }
    for key in ["cf:grown", "cf:fixed"] {
        seen.push(run(con, &format!("CF.INFO {key}")).unwrap());
        seen.push(
            redis::cmd("CF.MEXISTS")
                .arg(key)
                .arg(&probes)
                .query(con)
                .unwrap(),
        );
        seen.push(run(con, &format!("CF.COUNT {key} d1")).unwrap());
        seen.push(run(con, &format!("DEBUG DIGEST-VALUE {key}")).unwrap());
    }
    seen.push(
        run(con, "BF.EXISTS bf:restoring x")
            .unwrap_or_else(|err| Value::SimpleString(crate::error_text(&err))),
    );
    seen.push(run(con, "DEBUG DIGEST-VALUE bf:restoring").unwrap());
    let ttl = int(con, "TTL bf:ttl");
    seen.push(Value::Boolean(ttl > 90_000));
    seen.push(run(con, "DBSIZE").unwrap());
    seen
}

/// Waits until a background rewrite or save has finished.
fn wait_persisted(con: &mut Connection) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let info: String = redis::cmd("INFO").arg("persistence").query(con).unwrap();
        let busy = [
            "aof_rewrite_in_progress:1",
            "aof_rewrite_scheduled:1",
            "rdb_bgsave_in_progress:1",
        ]
        .iter()
        .any(|flag| info.contains(flag));
        if !busy {
            assert!(!info.contains("aof_last_bgrewrite_status:err"), "{info}");
            return;
        }
        sleep(Duration::from_millis(20));
    }
    panic!("the background rewrite did not finish");
}

#[test]
fn save_and_restart_answer_identically() {
    let Some(mut server) = start_with(false, &module_args(&[])) else {
        return;
    };
    let mut con = connect(&server);
    populate(&mut con);
    let before = snapshot(&mut con);
    ok(&mut con, "SAVE");
    server.kill();
    server.restart();
    let mut con = connect(&server);
    assert_eq!(snapshot(&mut con), before);
}

#[test]
fn bgrewriteaof_and_restart_answer_identically() {
    let mut args = module_args(&[]);
    args.extend(["--aof-use-rdb-preamble", "no"].map(str::to_owned));
    let Some(mut server) = start_with(true, &args) else {
        return;
    };
    let mut con = connect(&server);
    populate(&mut con);
    run(&mut con, "BGREWRITEAOF").unwrap();
    wait_persisted(&mut con);
    // Writes after the rewrite go to the incremental file.
    insert_all(&mut con, &["BF.MADD", "bf:grown"], &items("late", 0..100));
    int(&mut con, "CF.DEL cf:grown c400");
    let before = snapshot(&mut con);
    // The rewrite wrote the filters as LOADCHUNK commands (the type's
    // aof_rewrite), not as an RDB preamble.
    let dir = server
        .log_file()
        .unwrap()
        .parent()
        .unwrap()
        .join("appendonlydir");
    let base = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().ends_with(".base.aof"))
        .expect("a base AOF");
    let text = std::fs::read(&base).unwrap();
    assert!(text.windows(12).any(|window| window == b"bf.loadchunk"));
    assert!(text.windows(12).any(|window| window == b"cf.loadchunk"));
    server.kill();
    server.restart();
    let mut con = connect(&server);
    assert_eq!(snapshot(&mut con), before);
}

#[test]
fn debug_reload_answers_identically() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    populate(&mut con);
    let before = snapshot(&mut con);
    ok(&mut con, "DEBUG RELOAD");
    assert_eq!(snapshot(&mut con), before);
}

#[test]
fn copy_rename_expire_and_del_work_as_on_any_key() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    populate(&mut con);
    for key in ["bf:grown", "cf:grown", "bf:restoring"] {
        assert_eq!(int(&mut con, &format!("COPY {key} copy:{key}")), 1);
        assert_eq!(
            run(&mut con, &format!("DEBUG DIGEST-VALUE {key} copy:{key}")).unwrap(),
            {
                let digest = run(&mut con, &format!("DEBUG DIGEST-VALUE {key}")).unwrap();
                let Value::Array(one) = digest else {
                    panic!("digest")
                };
                Value::Array(vec![one[0].clone(), one[0].clone()])
            }
        );
    }
    // The copy is independent of its source: keys added to it change its
    // count and digest, not the source's (the source may still answer a
    // few of them as false positives, so the count is what is compared).
    let source_card = int(&mut con, "BF.CARD bf:grown");
    let source_digest = run(&mut con, "DEBUG DIGEST-VALUE bf:grown").unwrap();
    let added: i64 = (0..20)
        .map(|i| {
            int(
                &mut con,
                &format!("BF.ADD copy:bf:grown only-in-the-copy-{i}"),
            )
        })
        .sum();
    assert!(added > 0);
    assert_eq!(int(&mut con, "BF.CARD copy:bf:grown"), source_card + added);
    assert_eq!(int(&mut con, "BF.CARD bf:grown"), source_card);
    assert_eq!(
        run(&mut con, "DEBUG DIGEST-VALUE bf:grown").unwrap(),
        source_digest
    );
    let in_source: i64 = (0..20)
        .map(|i| {
            int(
                &mut con,
                &format!("BF.EXISTS bf:grown only-in-the-copy-{i}"),
            )
        })
        .sum();
    assert!(in_source < added, "{in_source} of {added} in the source");
    ok(&mut con, "RENAME cf:grown cf:renamed");
    assert_eq!(int(&mut con, "CF.EXISTS cf:renamed c1000"), 1);
    assert_eq!(int(&mut con, "EXISTS cf:grown"), 0);
    assert_eq!(int(&mut con, "PEXPIRE bf:fixed 30"), 1);
    sleep(Duration::from_millis(80));
    assert_eq!(int(&mut con, "EXISTS bf:fixed"), 0);
    assert_eq!(int(&mut con, "DEL bf:grown cf:fixed"), 2);
    assert_eq!(error(&mut con, "BF.INFO bf:grown"), "ERR not found");
}

fn used_memory_in(info: &str) -> i64 {
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|value| value.trim().parse().ok())
        .expect("used_memory")
}

/// MEMORY USAGE is what the value holds in the server's allocator: about
/// what DEL gives back (the key's own few dozen bytes aside).
#[test]
fn memory_usage_is_what_del_releases() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    // The server's first transaction allocates for itself once (about
    // 48 KiB here): a throwaway round first.
    for (round, (create, fill)) in [
        ("BF.RESERVE key 0.01 1000", &["BF.MADD", "key"][..]),
        ("BF.RESERVE key 0.01 1000000", &["BF.MADD", "key"][..]),
        ("BF.RESERVE key 0.001 1000", &["BF.MADD", "key"][..]),
        ("CF.RESERVE key 1000000", &["CF.INSERT", "key", "ITEMS"][..]),
        (
            "CF.RESERVE key 1000 EXPANSION 2",
            &["CF.INSERT", "key", "ITEMS"][..],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        ok(&mut con, create);
        insert_all(&mut con, fill, &items("m", 0..20_000));
        let usage = int(&mut con, "MEMORY USAGE key");
        // In one transaction: no client buffer changes in between.
        let (before, deleted, after): (String, i64, String) = redis::pipe()
            .atomic()
            .cmd("INFO")
            .arg("memory")
            .cmd("DEL")
            .arg("key")
            .cmd("INFO")
            .arg("memory")
            .query(&mut con)
            .unwrap();
        assert_eq!(deleted, 1);
        let released = used_memory_in(&before) - used_memory_in(&after);
        if round == 0 {
            continue;
        }
        // The key's own bytes (its name, its entry) are counted both ways.
        assert!(
            (usage - released).abs() <= 64,
            "{create}: MEMORY USAGE {usage}, DEL released {released}"
        );
    }
}

/// A filter that would not fit under `maxmemory` is refused before it is
/// allocated, in RedisBloom's words; writes past the limit are refused by
/// the server (the commands are `deny-oom`).
#[test]
fn maxmemory_is_respected() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    ok(&mut con, "CONFIG SET maxmemory 20mb");
    for line in [
        "BF.RESERVE big 0.0001 100000000",
        "CF.RESERVE big 100000000",
        "BF.INSERT big CAPACITY 100000000 ITEMS a",
    ] {
        assert_eq!(
            error(&mut con, line),
            "ERR Insufficient memory to create filter",
            "{line}"
        );
    }
    assert_eq!(int(&mut con, "DBSIZE"), 0);
    ok(&mut con, "BF.RESERVE fits 0.01 1000000");
    ok(&mut con, "CONFIG SET maxmemory 1mb");
    assert!(error(&mut con, "BF.ADD fits x").starts_with("OOM"));
    assert_eq!(int(&mut con, "BF.EXISTS fits x"), 0);
}

/// Redis's DUMP checksum (CRC-64/Jones, reflected, as `crc64.c`).
fn crc64(bytes: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &byte in bytes {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// `payload` (DUMP's: value, RDB version, CRC-64) with its value edited
/// and its checksum made right again, so that the module sees the edit.
fn resealed(payload: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut body = payload[..payload.len() - 10].to_vec();
    let version = &payload[payload.len() - 10..payload.len() - 8];
    edit(&mut body);
    body.extend_from_slice(version);
    let crc = crc64(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// A damaged payload (RESTORE) is refused with "Bad data format" and a
/// line in the server's log, never a crash.
#[test]
fn a_damaged_payload_is_refused_with_a_log_line() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    populate(&mut con);
    for key in ["bf:grown", "cf:grown", "bf:restoring"] {
        let payload: Vec<u8> = redis::cmd("DUMP").arg(key).query(&mut con).unwrap();
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        // Sound, the payload restores.
        let copy = resealed(&payload, |_| {});
        assert_eq!(copy, payload);
        let restored: Value = redis::cmd("RESTORE")
            .arg(format!("ok:{key}"))
            .arg(0)
            .arg(&payload)
            .query(&mut con)
            .unwrap();
        assert_eq!(restored, Value::Okay);
        // Bytes of the filter's format (after its magic), flipped one at a time.
        let start = payload
            .windows(8)
            .position(|window| window == b"FLTRLAB\0" || window == b"FLTRCHNK")
            .expect("the filter's format in the payload");
        let end = payload.len() - 12;
        for at in (start..end).step_by(((end - start) / 40).max(1)) {
            let damaged = resealed(&payload, |body| body[at] ^= 0x5a);
            let refused = redis::cmd("RESTORE")
                .arg("damaged")
                .arg(0)
                .arg(&damaged)
                .query::<Value>(&mut con);
            let err = refused.expect_err("a damaged payload restored");
            assert!(
                crate::error_text(&err).contains("Bad data format"),
                "{key} byte {at}: {err}"
            );
        }
    }
    assert_eq!(
        run(&mut con, "PING").unwrap(),
        Value::SimpleString("PONG".into())
    );
    assert_eq!(int(&mut con, "EXISTS damaged"), 0);
    let log = std::fs::read_to_string(server.log_file().unwrap()).unwrap();
    assert!(log.contains("filterlab: refused a damaged value"), "{log}");
}
