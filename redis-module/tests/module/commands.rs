//! The commands' replies and errors, as RedisBloom's (its flow tests and
//! `src/rebloom.c`), every argument error named; RESP3; the answers of a
//! local twin filter; the renamed prefix; a client's typed API (redis-rs);
//! arguments of every shape, which never take the server down.

use filterlab_core::{Filter, KeyHasher, Membership, mix64};
use filterlab_cuckoo::CuckooFilter;
use filterlab_redis_module::options::DEFAULT_FIRST_SHARE;
use filterlab_scalable::ScalableBloomFilter;
use redis::Value;

use crate::{connect, error, insert_all, int, ints, items, lookup_all, ok, run};

const WRONG_TYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Stands for the server's wrong-number-of-arguments error in the tables.
const ARITY: &str = "arity";

/// Runs every line of `table`, expecting its error.
fn check_errors(con: &mut redis::Connection, table: &[(&str, &str)]) {
    for &(line, expected) in table {
        let expected = if expected == ARITY {
            let command = line
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            format!("ERR wrong number of arguments for '{command}' command")
        } else {
            expected.to_owned()
        };
        assert_eq!(error(con, line), expected, "{line}");
    }
}

#[test]
fn bf_replies_are_redisbloom_s() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    ok(&mut con, "BF.RESERVE bf 0.001 100");
    assert_eq!(int(&mut con, "BF.ADD bf foo"), 1);
    assert_eq!(int(&mut con, "BF.ADD bf foo"), 0);
    assert_eq!(ints(&mut con, "BF.MADD bf foo bar baz"), [0, 1, 1]);
    assert_eq!(int(&mut con, "BF.EXISTS bf bar"), 1);
    assert_eq!(int(&mut con, "BF.EXISTS bf nonexist"), 0);
    assert_eq!(ints(&mut con, "BF.MEXISTS bf nonexist foo"), [0, 1]);
    assert_eq!(int(&mut con, "BF.CARD bf"), 3);
    assert_eq!(int(&mut con, "BF.CARD missing"), 0);
    // Missing filters answer 0 to lookups, as RedisBloom's do.
    assert_eq!(int(&mut con, "BF.EXISTS missing foo"), 0);
    assert_eq!(ints(&mut con, "BF.MEXISTS missing foo bar baz"), [0, 0, 0]);
    // BF.INFO: every field, in order, and each alone.
    let Ok(Value::Array(info)) = run(&mut con, "BF.INFO bf") else {
        panic!("BF.INFO");
    };
    let labels: Vec<String> = info
        .iter()
        .step_by(2)
        .map(|label| redis::from_redis_value(label.clone()).unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "Capacity",
            "Size",
            "Number of filters",
            "Number of items inserted",
            "Expansion rate"
        ]
    );
    assert_eq!(info[1], Value::Int(100));
    assert_eq!(
        (&info[5], &info[7], &info[9]),
        (&Value::Int(1), &Value::Int(3), &Value::Int(2))
    );
    let size = int(&mut con, "MEMORY USAGE bf");
    let Value::Int(reported) = info[3] else {
        panic!("Size")
    };
    assert!(
        reported > 0 && reported <= size,
        "Size {reported}, MEMORY USAGE {size}"
    );
    for (field, value) in [
        ("capacity", 100),
        ("filters", 1),
        ("items", 3),
        ("EXPANSION", 2),
    ] {
        assert_eq!(
            ints(&mut con, &format!("BF.INFO bf {field}")),
            [value],
            "{field}"
        );
    }
    // NONSCALING: refused past capacity, the error inside the array, and
    // the insert stops there; Expansion rate nil.
    assert_eq!(
        ints(&mut con, "BF.INSERT ns CAPACITY 3 NONSCALING ITEMS a b c"),
        [1, 1, 1]
    );
    let Ok(Value::Array(answers)) = run(&mut con, "BF.INSERT ns ITEMS a b c d d") else {
        panic!("BF.INSERT");
    };
    assert_eq!(answers.len(), 4);
    assert_eq!(&answers[..3], [Value::Int(0), Value::Int(0), Value::Int(0)]);
    let Value::ServerError(full) = &answers[3] else {
        panic!("{answers:?}")
    };
    assert_eq!(full.details(), Some("non scaling filter is full"));
    assert_eq!(
        error(&mut con, "BF.ADD ns d"),
        "ERR non scaling filter is full"
    );
    assert_eq!(
        run(&mut con, "BF.INFO ns EXPANSION").unwrap(),
        Value::Array(vec![Value::Nil])
    );
    // A non-scaling filter is smaller than a scaling one of the same target.
    ok(&mut con, "BF.RESERVE fixed 0.001 1000 NONSCALING");
    ok(&mut con, "BF.RESERVE grows 0.001 1000");
    assert!(ints(&mut con, "BF.INFO fixed size")[0] < ints(&mut con, "BF.INFO grows size")[0]);
    // BF.ADD creates with the defaults (0.01, 100, expansion 2).
    assert_eq!(int(&mut con, "BF.ADD made x"), 1);
    assert_eq!(ints(&mut con, "BF.INFO made capacity"), [100]);
    // EXPANSION 1: layers of equal size.
    ok(&mut con, "BF.RESERVE one 0.01 4 EXPANSION 1");
    for i in 0..40 {
        int(&mut con, &format!("BF.ADD one {i}"));
    }
    assert!(ints(&mut con, "BF.INFO one filters")[0] >= 10);
    // BF.DEBUG: the count, then a line per layer.
    let Ok(Value::Array(lines)) = run(&mut con, "BF.DEBUG one") else {
        panic!("BF.DEBUG")
    };
    assert_eq!(
        lines.len() as i64,
        1 + ints(&mut con, "BF.INFO one filters")[0]
    );
}

/// Every argument error of the BF commands: a command line, and the error it
/// replies (`ARITY`: the server's wrong-number-of-arguments error).
const BF_ERRORS: &[(&str, &str)] = &[
    ("BF.RESERVE", ARITY),
    ("BF.RESERVE foo", ARITY),
    ("BF.RESERVE foo 0.001", ARITY),
    ("BF.RESERVE foo 0.01 1 EXPANSION 2 NONSCALING x", ARITY),
    ("BF.RESERVE foo blah 1000", "ERR bad error rate"),
    (
        "BF.RESERVE foo 0 100",
        "ERR error rate must be in the range (0.000000, 1.000000)",
    ),
    (
        "BF.RESERVE foo 1 1000",
        "ERR error rate must be in the range (0.000000, 1.000000)",
    ),
    (
        "BF.RESERVE foo 7.7 1000",
        "ERR error rate must be in the range (0.000000, 1.000000)",
    ),
    ("BF.RESERVE foo 0.001 blah", "ERR bad capacity"),
    (
        "BF.RESERVE foo 0 0",
        "ERR error rate must be in the range (0.000000, 1.000000)",
    ),
    (
        "BF.RESERVE foo 0.01 0",
        "ERR capacity must be in the range [1, 1073741824]",
    ),
    (
        "BF.RESERVE foo 0.01 1000000000000000000",
        "ERR capacity must be in the range [1, 1073741824]",
    ),
    ("BF.RESERVE foo 0.01 4 EXPANSION", "ERR no expansion"),
    ("BF.RESERVE foo 0.01 4 EXPANSION str", "ERR bad expansion"),
    (
        "BF.RESERVE foo 0.01 4 EXPANSION 0",
        "ERR expansion must be in the range [1, 32768]",
    ),
    (
        "BF.RESERVE foo 0.1 1 EXPANSION -1",
        "ERR expansion must be in the range [1, 32768]",
    ),
    (
        "BF.RESERVE foo 0.01 4 EXPANSION 32769",
        "ERR expansion must be in the range [1, 32768]",
    ),
    (
        "BF.RESERVE foo 0.01 1000 NONSCALING EXPANSION 2",
        "Nonscaling filters cannot expand",
    ),
    ("BF.RESERVE bf 0.01 1000", "ERR item exists"),
    ("BF.RESERVE string 0.01 1000", WRONG_TYPE),
    ("BF.ADD", ARITY),
    ("BF.ADD bf", ARITY),
    ("BF.ADD bf 1 2", ARITY),
    ("BF.ADD string x", WRONG_TYPE),
    ("BF.MADD bf", ARITY),
    ("BF.MADD string x", WRONG_TYPE),
    ("BF.EXISTS bf", ARITY),
    ("BF.EXISTS bf 1 2", ARITY),
    ("BF.MEXISTS bf", ARITY),
    ("BF.INSERT bf", ARITY),
    ("BF.INSERT missing NOCREATE ITEMS foo bar", "ERR not found"),
    (
        "BF.INSERT missing DONTEXIST NOCREATE",
        "Unknown argument received",
    ),
    ("BF.INSERT missing NOCREATE ITEMS", ARITY),
    ("BF.INSERT missing NOCREATE CAPACITY", ARITY),
    ("BF.INSERT missing CAPACITY 0.3", "Bad capacity"),
    ("BF.INSERT missing CAPACITY 0 ITEMS a", "Bad capacity"),
    ("BF.INSERT missing ERROR", ARITY),
    ("BF.INSERT missing ERROR big", "Bad error rate"),
    ("BF.INSERT missing ERROR 0 ITEMS a", "Bad error rate"),
    ("BF.INSERT missing EXPANSION -1 ITEMS foo", "Bad expansion"),
    ("BF.INSERT missing EXPANSION 0 ITEMS foo", "Bad expansion"),
    ("BF.INSERT missing EXPANSION big", "Bad expansion"),
    ("BF.INSERT string ITEMS a", WRONG_TYPE),
    ("BF.CARD", ARITY),
    ("BF.CARD string", WRONG_TYPE),
    ("BF.INFO", ARITY),
    ("BF.INFO bf capacity size", ARITY),
    ("BF.INFO bf wrong_value", "Invalid information value"),
    ("BF.INFO missing", "ERR not found"),
    ("BF.INFO string", WRONG_TYPE),
    ("BF.DEBUG bf noexist", ARITY),
    ("BF.DEBUG missing", "ERR not found"),
    ("BF.SCANDUMP bf", ARITY),
    ("BF.SCANDUMP bf str", "Second argument must be numeric"),
    ("BF.SCANDUMP missing 0", "ERR not found"),
    ("BF.LOADCHUNK bf", ARITY),
    ("BF.LOADCHUNK bf str", ARITY),
    (
        "BF.LOADCHUNK bf str data",
        "ERR Second argument must be numeric",
    ),
    ("BF.LOADCHUNK missing 2 data", "ERR not found"),
    ("BF.LOADCHUNK missing 1 data", "received bad data"),
    ("BF.LOADCHUNK bf 4 abcd", "invalid offset - no link found"),
    ("BF.LOADCHUNK bf 1 abcd", "invalid offset - no link found"),
    ("BF.LOADCHUNK string 1 abcd", WRONG_TYPE),
];

/// Every argument error of both families, with its text; nothing is
/// created by a refused command.
#[test]
fn argument_errors_are_named() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    ok(&mut con, "BF.RESERVE bf 0.01 1000");
    ok(&mut con, "CF.RESERVE cf 1000");
    ok(&mut con, "SET string value");
    check_errors(&mut con, BF_ERRORS);
    check_errors(&mut con, CF_ERRORS);
    assert_eq!(int(&mut con, "EXISTS foo err missing"), 0);
}

#[test]
fn cf_replies_are_redisbloom_s() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    ok(&mut con, "CF.RESERVE cf 1000");
    assert_eq!(int(&mut con, "CF.EXISTS cf k1"), 0);
    assert_eq!(int(&mut con, "CF.ADD cf k1"), 1);
    assert_eq!(int(&mut con, "CF.ADD cf k1"), 1);
    assert_eq!(int(&mut con, "CF.COUNT cf k1"), 2);
    assert_eq!(int(&mut con, "CF.DEL cf k1"), 1);
    assert_eq!(int(&mut con, "CF.COUNT cf k1"), 1);
    assert_eq!(int(&mut con, "CF.DEL cf k1"), 1);
    assert_eq!(int(&mut con, "CF.DEL cf k1"), 0);
    assert_eq!(int(&mut con, "CF.ADDNX cf k2"), 1);
    assert_eq!(int(&mut con, "CF.ADDNX cf k2"), 0);
    assert_eq!(ints(&mut con, "CF.INSERT f1 ITEMS foo bar baz"), [1, 1, 1]);
    assert_eq!(ints(&mut con, "CF.INSERTNX f1 ITEMS foo new"), [0, 1]);
    assert_eq!(
        ints(&mut con, "CF.MEXISTS f1 foo bar baz none"),
        [1, 1, 1, 0]
    );
    assert_eq!(int(&mut con, "CF.EXISTS missing blah"), 0);
    assert_eq!(ints(&mut con, "CF.MEXISTS missing blah"), [0]);
    assert_eq!(int(&mut con, "CF.COUNT missing blah"), 0);
    // CF.INFO: every field in order; the settings as given.
    ok(
        &mut con,
        "CF.RESERVE limits 67108864 BUCKETSIZE 255 MAXITERATIONS 65535 EXPANSION 32768",
    );
    let Ok(Value::Array(info)) = run(&mut con, "CF.INFO limits") else {
        panic!("CF.INFO")
    };
    let fields: Vec<(String, i64)> = info
        .chunks(2)
        .map(|pair| {
            (
                redis::from_redis_value(pair[0].clone()).unwrap(),
                redis::from_redis_value(pair[1].clone()).unwrap(),
            )
        })
        .collect();
    let labels: Vec<&str> = fields.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Size",
            "Number of buckets",
            "Number of filters",
            "Number of items inserted",
            "Number of items deleted",
            "Bucket size",
            "Expansion rate",
            "Max iterations"
        ]
    );
    assert_eq!(
        &fields[5..]
            .iter()
            .map(|(_, value)| *value)
            .collect::<Vec<_>>(),
        &[255, 32768, 65535]
    );
    let Ok(Value::Array(info)) = run(&mut con, "CF.INFO cf") else {
        panic!("CF.INFO")
    };
    assert_eq!(
        (&info[7], &info[9]),
        (&Value::Int(1), &Value::Int(2)),
        "{info:?}"
    );
    // EXPANSION 0: a filter that does not grow says so, -1 in an array.
    ok(&mut con, "CF.RESERVE fixed 4 EXPANSION 0");
    let answers = ints(
        &mut con,
        &format!(
            "CF.INSERT fixed ITEMS {}",
            (0..64).map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
        ),
    );
    assert!(answers.contains(&-1) && answers[0] == 1, "{answers:?}");
    assert_eq!(error(&mut con, "CF.ADD fixed another"), "Filter is full");
    // At its sub-filter cap a growing filter says "Maximum expansions reached".
    let capped = server_or_skip!("cf-max-expansions", "2");
    let mut capped = connect(&capped);
    ok(&mut capped, "CF.RESERVE small 4");
    let refused = (0..1000).find_map(|i| match run(&mut capped, &format!("CF.ADD small {i}")) {
        Err(err) => Some(crate::error_text(&err)),
        Ok(_) => None,
    });
    assert_eq!(refused.as_deref(), Some("Maximum expansions reached"));
    // CF.SCANDUMP of an empty filter: [0, nil]; CF.COMPACT: OK.
    ok(&mut con, "CF.RESERVE empty 100");
    assert_eq!(
        run(&mut con, "CF.SCANDUMP empty 0").unwrap(),
        Value::Array(vec![Value::Int(0), Value::Nil])
    );
    ok(&mut con, "CF.COMPACT cf");
    // Many copies of one item: kept beside the tables of a growing filter.
    ok(&mut con, "CF.RESERVE copies 2 BUCKETSIZE 1 EXPANSION 1");
    let answers = ints(
        &mut con,
        &format!("CF.INSERT copies ITEMS {}", vec!["1"; 2000].join(" ")),
    );
    assert!(answers.iter().all(|&answer| answer == 1));
    assert_eq!(int(&mut con, "CF.COUNT copies 1"), 2000);
}

/// Every argument error of the CF commands: a command line, and the error it
/// replies (`ARITY`: the server's wrong-number-of-arguments error).
const CF_ERRORS: &[(&str, &str)] = &[
    ("CF.RESERVE", ARITY),
    ("CF.RESERVE err", ARITY),
    ("CF.RESERVE err 10 BUCKETSIZE", ARITY),
    ("CF.RESERVE err str", "Bad capacity"),
    (
        "CF.RESERVE err 1",
        "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
    ),
    (
        "CF.RESERVE err 1073741825",
        "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
    ),
    (
        "CF.RESERVE err 10 BUCKETSIZE 8",
        "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
    ),
    (
        "CF.RESERVE err 10 EXPANSION -1",
        "EXPANSION: value must be in the range [0, 32768]",
    ),
    (
        "CF.RESERVE err 100 EXPANSION 327695",
        "EXPANSION: value must be in the range [0, 32768]",
    ),
    (
        "CF.RESERVE err 10 EXPANSION string",
        "Couldn't parse EXPANSION",
    ),
    (
        "CF.RESERVE err 10 BUCKETSIZE 0",
        "BUCKETSIZE: value must be in the range [1, 255]",
    ),
    (
        "CF.RESERVE err 10 BUCKETSIZE -1",
        "BUCKETSIZE: value must be in the range [1, 255]",
    ),
    (
        "CF.RESERVE err 100 BUCKETSIZE 33554432",
        "BUCKETSIZE: value must be in the range [1, 255]",
    ),
    (
        "CF.RESERVE err 10 BUCKETSIZE string",
        "Couldn't parse BUCKETSIZE",
    ),
    (
        "CF.RESERVE err 10 MAXITERATIONS 0",
        "MAXITERATIONS: value must be in the range [1, 65535]",
    ),
    (
        "CF.RESERVE err 100 MAXITERATIONS 165536",
        "MAXITERATIONS: value must be in the range [1, 65535]",
    ),
    (
        "CF.RESERVE err 10 MAXITERATIONS string",
        "Couldn't parse MAXITERATIONS",
    ),
    ("CF.RESERVE cf 1000", "ERR item exists"),
    ("CF.RESERVE string 1000", WRONG_TYPE),
    ("CF.ADD", ARITY),
    ("CF.ADD err", ARITY),
    ("CF.ADD string x", WRONG_TYPE),
    ("CF.ADDNX err", ARITY),
    ("CF.INSERT", ARITY),
    ("CF.INSERT err", ARITY),
    ("CF.INSERT err element", ARITY),
    (
        "CF.INSERT cf CAPACITY -1 ITEMS k0",
        "Capacity must be in the range [cf-bucket-size * 2, 1073741824]",
    ),
    (
        "CF.INSERT cf CAPACITY 3 ITEMS k0",
        "Capacity must be in the range [cf-bucket-size * 2, 1073741824]",
    ),
    ("CF.INSERT cf NOCREATE CAPACITY", ARITY),
    ("CF.INSERT cf NOCREATE CAPACITY str ITEMS a", "Bad capacity"),
    (
        "CF.INSERT cf NOCREATE DONTEXIST",
        "Unknown argument received",
    ),
    ("CF.INSERT cf NOCREATE ITEMS", ARITY),
    ("CF.INSERT missing NOCREATE ITEMS foo", "ERR not found"),
    ("CF.INSERTNX err element", ARITY),
    (
        "CF.INSERTNX cf CAPACITY 3 ITEMS k0",
        "Capacity must be in the range [cf-bucket-size * 2, 1073741824]",
    ),
    ("CF.EXISTS", ARITY),
    ("CF.EXISTS err", ARITY),
    ("CF.MEXISTS err", ARITY),
    ("CF.COUNT err", ARITY),
    ("CF.DEL", ARITY),
    ("CF.DEL err", ARITY),
    ("CF.DEL missing k1", "Not found"),
    ("CF.DEL string k1", "Not found"),
    ("CF.COMPACT a", "Cuckoo filter was not found"),
    ("CF.COMPACT a b", ARITY),
    ("CF.INFO", ARITY),
    ("CF.INFO missing", "ERR not found"),
    ("CF.INFO string", WRONG_TYPE),
    ("CF.DEBUG", ARITY),
    ("CF.DEBUG missing", "ERR not found"),
    ("CF.SCANDUMP err", ARITY),
    ("CF.SCANDUMP cf str", "Invalid position"),
    ("CF.SCANDUMP cf -1", "Invalid position"),
    ("CF.SCANDUMP missing 0", "ERR not found"),
    ("CF.LOADCHUNK err", ARITY),
    ("CF.LOADCHUNK err iterator", ARITY),
    ("CF.LOADCHUNK cf 0 data", "Invalid position"),
    ("CF.LOADCHUNK cf str data", "Invalid position"),
    ("CF.LOADCHUNK cf 1 data", "ERR item exists"),
    ("CF.LOADCHUNK cf 4 abcd", "Couldn't load chunk!"),
    ("CF.LOADCHUNK missing 1 abcd", "Couldn't create filter!"),
    ("CF.LOADCHUNK missing 2 abcd", "ERR not found"),
    ("CF.LOADCHUNK string 1 abcd", WRONG_TYPE),
];

#[test]
fn resp3_clients_get_booleans_and_maps() {
    let server = server_or_skip!();
    let client = redis::Client::open(format!("{}?protocol=resp3", server.url())).unwrap();
    let mut con = client.get_connection().unwrap();
    assert_eq!(
        run(&mut con, "BF.ADD bf foo").unwrap(),
        Value::Boolean(true)
    );
    assert_eq!(
        run(&mut con, "BF.MADD bf foo bar").unwrap(),
        Value::Array(vec![Value::Boolean(false), Value::Boolean(true)])
    );
    let Ok(Value::Map(info)) = run(&mut con, "BF.INFO bf") else {
        panic!("BF.INFO")
    };
    assert_eq!(info.len(), 5);
    let Ok(Value::Map(one)) = run(&mut con, "BF.INFO bf items") else {
        panic!("BF.INFO items")
    };
    assert_eq!(
        one,
        [(
            Value::SimpleString("Number of items inserted".into()),
            Value::Int(2)
        )]
    );
    assert_eq!(
        run(&mut con, "CF.INSERT cf ITEMS a b").unwrap(),
        Value::Array(vec![Value::Boolean(true), Value::Boolean(true)])
    );
    // CF.INSERTNX answers integers, as RedisBloom's does.
    assert_eq!(
        run(&mut con, "CF.INSERTNX cf ITEMS a c").unwrap(),
        Value::Array(vec![Value::Int(0), Value::Int(1)])
    );
    assert_eq!(run(&mut con, "CF.COUNT cf a").unwrap(), Value::Int(1));
    assert_eq!(run(&mut con, "CF.DEL cf a").unwrap(), Value::Boolean(true));
    let Ok(Value::Map(info)) = run(&mut con, "CF.INFO cf") else {
        panic!("CF.INFO")
    };
    assert_eq!(info.len(), 8);
}

/// The module's answers are a local filter's of the same configuration, on
/// the same items hashed over their bytes: every inserted item present
/// (no false negative), and the same false positives.
#[test]
fn answers_are_those_of_a_local_twin() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    let inserted = items("in-", 0..20_000);
    let absent = items("out-", 0..50_000);
    let hasher = KeyHasher::default();
    ok(&mut con, "BF.RESERVE bf 0.01 5000");
    insert_all(&mut con, &["BF.MADD", "bf"], &inserted);
    let mut twin = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(5000)
        .first_layer_share(DEFAULT_FIRST_SHARE)
        .build()
        .unwrap();
    for item in &inserted {
        twin.insert_hash(hasher.hash_bytes(item)).unwrap();
    }
    assert_eq!(int(&mut con, "BF.CARD bf"), twin.len() as i64);
    assert!(
        lookup_all(&mut con, "BF.MEXISTS", "bf", &inserted)
            .iter()
            .all(|&hit| hit)
    );
    let expected: Vec<bool> = absent
        .iter()
        .map(|item| twin.contains_hash(hasher.hash_bytes(item)))
        .collect();
    assert_eq!(lookup_all(&mut con, "BF.MEXISTS", "bf", &absent), expected);
    assert!(
        expected.iter().any(|&hit| hit),
        "some false positives to compare"
    );

    ok(&mut con, "CF.RESERVE cf 5000 EXPANSION 2");
    insert_all(&mut con, &["CF.INSERT", "cf", "ITEMS"], &inserted);
    let mut twin = CuckooFilter::with_fpp(0.01)
        .expected_items(5000)
        .max_kicks(500)
        .expansion(2)
        .max_tables(32)
        .build()
        .unwrap();
    for item in &inserted {
        twin.insert_hash(hasher.hash_bytes(item)).unwrap();
    }
    assert!(
        lookup_all(&mut con, "CF.MEXISTS", "cf", &inserted)
            .iter()
            .all(|&hit| hit)
    );
    let expected: Vec<bool> = absent
        .iter()
        .map(|item| twin.contains_hash(hasher.hash_bytes(item)))
        .collect();
    assert_eq!(lookup_all(&mut con, "CF.MEXISTS", "cf", &absent), expected);
}

/// A dump travels chunk by chunk, at least two of them, and restores the
/// same filter; a damaged chunk is refused with RedisBloom's words, and a
/// key being restored answers only LOADCHUNK.
#[test]
fn scandump_and_loadchunk_round_trip() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    for (family, create) in [
        ("BF", "BF.RESERVE src 0.01 1000"),
        ("CF", "CF.RESERVE src 1000 EXPANSION 2"),
    ] {
        ok(&mut con, "FLUSHALL");
        ok(&mut con, create);
        let add = if family == "BF" {
            ["BF.MADD", "src"].as_slice()
        } else {
            ["CF.INSERT", "src", "ITEMS"].as_slice()
        };
        let inserted = items("x", 0..5000);
        insert_all(&mut con, add, &inserted);
        let mut chunks: Vec<(i64, Vec<u8>)> = Vec::new();
        loop {
            let cursor = chunks.last().map_or(0, |chunk| chunk.0);
            let (next, data): (i64, Option<Vec<u8>>) = redis::cmd(&format!("{family}.SCANDUMP"))
                .arg("src")
                .arg(cursor)
                .query(&mut con)
                .unwrap();
            if next == 0 {
                break;
            }
            chunks.push((next, data.unwrap()));
        }
        assert!(chunks.len() >= 2, "{family}: {} chunks", chunks.len());
        let loadchunk = format!("{family}.LOADCHUNK");
        let load = |con: &mut redis::Connection, key: &str, chunk: &(i64, Vec<u8>)| {
            redis::cmd(&loadchunk)
                .arg(key)
                .arg(chunk.0)
                .arg(&chunk.1)
                .query::<Value>(con)
        };
        // A damaged first chunk.
        let mut damaged = chunks[0].clone();
        damaged.1[40] ^= 0xff;
        let expected = if family == "BF" {
            "received bad data"
        } else {
            "Couldn't create filter!"
        };
        assert_eq!(
            crate::error_text(&load(&mut con, "copy", &damaged).unwrap_err()),
            expected
        );
        // Under way, the key answers LOADCHUNK only.
        load(&mut con, "copy", &chunks[0]).unwrap();
        let lookup = format!("{family}.EXISTS copy x1");
        assert!(error(&mut con, &lookup).contains("being restored"));
        let skipped = (chunks[0].0 + 5, chunks[1].1.clone());
        let expected = if family == "BF" {
            "invalid offset - no link found"
        } else {
            "Couldn't load chunk!"
        };
        assert_eq!(
            crate::error_text(&load(&mut con, "copy", &skipped).unwrap_err()),
            expected
        );
        for chunk in &chunks[1..] {
            load(&mut con, "copy", chunk).unwrap();
        }
        let command = format!("{family}.MEXISTS");
        assert!(
            lookup_all(&mut con, &command, "copy", &inserted)
                .iter()
                .all(|&hit| hit)
        );
        let absent = items("y", 0..5000);
        assert_eq!(
            lookup_all(&mut con, &command, "copy", &absent),
            lookup_all(&mut con, &command, "src", &absent)
        );
        assert_eq!(
            run(&mut con, &format!("{family}.INFO copy")).unwrap(),
            run(&mut con, &format!("{family}.INFO src")).unwrap()
        );
        // Past the last chunk, and at any cursor, SCANDUMP replies.
        for cursor in [chunks.len() as i64, 1000, i64::MAX] {
            let (next, _): (i64, Value) = redis::cmd(&format!("{family}.SCANDUMP"))
                .arg("src")
                .arg(cursor)
                .query(&mut con)
                .unwrap();
            assert_eq!(next, 0);
        }
    }
}

/// `bf-prefix` and `cf-prefix` rename the commands (to load beside
/// RedisBloom); the data types' names never clash with RedisBloom's.
#[test]
fn a_renamed_prefix_serves_the_same_commands() {
    let server = server_or_skip!(
        "bf-prefix",
        "FLBF",
        "cf-prefix",
        "FLCF",
        "bf-error-rate",
        "0.001",
        "bf-first-share",
        "0.5"
    );
    let mut con = connect(&server);
    assert_eq!(int(&mut con, "FLBF.ADD k x"), 1);
    assert_eq!(int(&mut con, "FLCF.ADD c x"), 1);
    assert!(error(&mut con, "BF.ADD k x").contains("unknown command"));
    assert!(error(&mut con, "CF.ADD k x").contains("unknown command"));
    assert_eq!(ints(&mut con, "FLBF.INFO k capacity"), [100]);
    let kind: String = redis::cmd("TYPE").arg("k").query(&mut con).unwrap();
    assert_eq!(kind, "FLTRbloom");
    let kind: String = redis::cmd("TYPE").arg("c").query(&mut con).unwrap();
    assert_eq!(kind, "FLTRcucko");
    // The default error rate and the first layer's share from module
    // arguments: half of 0.001, then 0.5·0.001·0.15 for the next layer.
    let Ok(Value::Array(lines)) = run(&mut con, "FLBF.DEBUG k") else {
        panic!("FLBF.DEBUG")
    };
    let line: String = redis::from_redis_value(lines[1].clone()).unwrap();
    assert!(line.contains("ratio:0.0005 "), "{line}");
    for i in 0..200 {
        int(&mut con, &format!("FLBF.ADD k {i}"));
    }
    let Ok(Value::Array(lines)) = run(&mut con, "FLBF.DEBUG k") else {
        panic!("FLBF.DEBUG")
    };
    let line: String = redis::from_redis_value(lines[2].clone()).unwrap();
    assert!(line.contains("ratio:7.5e-05 "), "{line}");
}

/// redis-rs's typed Bloom filter commands (its `bloom` feature, written
/// for RedisBloom) work unchanged.
#[test]
fn redis_rs_bloom_commands_work_unchanged() {
    use redis::TypedCommands;
    use redis::bloom::{BloomFilterDumpIterator, BloomFilterInfoType, BloomFilterInsertOptions};
    let server = server_or_skip!();
    let mut con = connect(&server);
    assert_eq!(con.bf_add("k", "foo"), Ok(true));
    assert_eq!(con.bf_madd("k", &["foo", "bar"]), Ok(vec![false, true]));
    assert_eq!(
        con.bf_mexists("k", &["foo", "bar", "baz"]),
        Ok(vec![true, true, false])
    );
    assert_eq!(con.bf_exists("k", "baz"), Ok(false));
    assert_eq!(con.bf_card("k"), Ok(2));
    let info = con.bf_info("k").unwrap();
    assert_eq!(info.len(), 5);
    assert!(con.bf_info_type("k", BloomFilterInfoType::Capacity).is_ok());
    let options = BloomFilterInsertOptions::default()
        .capacity(1000)
        .error_rate(0.001);
    assert_eq!(
        con.bf_insert_options("other", &["a", "b"], options),
        Ok(vec![true, true])
    );
    let chunks: Vec<_> = BloomFilterDumpIterator::new(&mut con, "other")
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(chunks.len() >= 2);
    for chunk in chunks {
        con.bf_loadchunk("copy", chunk).unwrap();
    }
    assert_eq!(
        con.bf_mexists("copy", &["a", "b", "c"]),
        Ok(vec![true, true, false])
    );
}

/// Arguments of every shape to every command: each gets a reply (an
/// answer or an error) and the server stays up. The module never panics
/// into the server.
#[test]
fn arguments_of_any_shape_never_take_the_server_down() {
    let server = server_or_skip!();
    let mut con = connect(&server);
    let commands = [
        "BF.RESERVE",
        "BF.ADD",
        "BF.MADD",
        "BF.INSERT",
        "BF.EXISTS",
        "BF.MEXISTS",
        "BF.CARD",
        "BF.INFO",
        "BF.DEBUG",
        "BF.SCANDUMP",
        "BF.LOADCHUNK",
        "CF.RESERVE",
        "CF.ADD",
        "CF.ADDNX",
        "CF.INSERT",
        "CF.INSERTNX",
        "CF.EXISTS",
        "CF.MEXISTS",
        "CF.COUNT",
        "CF.DEL",
        "CF.COMPACT",
        "CF.INFO",
        "CF.DEBUG",
        "CF.SCANDUMP",
        "CF.LOADCHUNK",
    ];
    let words = [
        "k",
        "b",
        "c",
        "0",
        "1",
        "2",
        "-1",
        "0.5",
        "1e-300",
        "1e308",
        "nan",
        "inf",
        "-0",
        "4294967296",
        "18446744073709551616",
        "9223372036854775807",
        "ITEMS",
        "items",
        "NOCREATE",
        "NONSCALING",
        "CAPACITY",
        "ERROR",
        "EXPANSION",
        "BUCKETSIZE",
        "MAXITERATIONS",
        "n",
        "e",
        "",
        "\u{0}",
        "capacity",
        "size",
    ];
    ok(&mut con, "BF.RESERVE b 0.01 100");
    ok(&mut con, "CF.RESERVE c 100");
    let mut state = 31u64;
    let mut draw = |below: usize| {
        state = mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
        (state % below as u64) as usize
    };
    for round in 0..3000 {
        let command = commands[round % commands.len()];
        let mut cmd = redis::cmd(command);
        for _ in 0..draw(8) {
            cmd.arg(words[draw(words.len())]);
        }
        let _ = cmd.query::<Value>(&mut con);
    }
    assert_eq!(
        run(&mut con, "PING").unwrap(),
        Value::SimpleString("PONG".into())
    );
}
