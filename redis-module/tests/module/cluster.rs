//! On a 3-master Redis Cluster every command routes by its key (the key
//! spec the module declares): 10^5 items over filters in every master's
//! slot range answer exactly as the same commands on one server.

use filterlab_redis::testing::Cluster;
use redis::{Commands, ConnectionLike};

use crate::{connect, items, module_args, start};

/// Filters named so that each master serves some of them.
const FILTERS: usize = 12;

/// The items of each filter: item number i goes to filter i mod [`FILTERS`].
fn batches(items: &[Vec<u8>]) -> Vec<Vec<&[u8]>> {
    let mut per_filter: Vec<Vec<&[u8]>> = vec![Vec::new(); FILTERS];
    for (number, item) in items.iter().enumerate() {
        per_filter[number % FILTERS].push(item);
    }
    per_filter
}

#[test]
fn filters_in_every_slot_range_answer_as_on_one_node() {
    let args = module_args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(cluster) = Cluster::start_or_skip_with(3, 0, &args) else {
        return;
    };
    let Some(single) = start(&[]) else { return };
    let mut node = connect(&single);
    let mut clustered = cluster.client().get_connection().unwrap();
    let names: Vec<String> = (0..FILTERS).map(|i| format!("filter-{i}")).collect();
    assert_spans_the_masters(&mut clustered, &names);
    for con in [&mut clustered as &mut dyn ConnectionLike, &mut node] {
        for (index, name) in names.iter().enumerate() {
            let create = if index.is_multiple_of(2) {
                redis::cmd("BF.RESERVE")
                    .arg(name)
                    .arg(0.01)
                    .arg(2000)
                    .clone()
            } else {
                redis::cmd("CF.RESERVE")
                    .arg(name)
                    .arg(2000)
                    .arg("EXPANSION")
                    .arg(2)
                    .clone()
            };
            let _: () = create.query(con).unwrap();
        }
    }
    // 10^5 items, each to the filter its number names, in batches.
    let inserted = items("item-", 0..100_000);
    let absent = items("absent-", 0..20_000);
    let command = |index: usize, lookup: bool| match (index.is_multiple_of(2), lookup) {
        (true, false) => ("BF.MADD", false),
        (true, true) => ("BF.MEXISTS", false),
        (false, false) => ("CF.INSERT", true),
        (false, true) => ("CF.MEXISTS", false),
    };
    for con in [&mut clustered as &mut dyn ConnectionLike, &mut node] {
        for (index, batch) in batches(&inserted).iter().enumerate() {
            for part in batch.chunks(1000) {
                let (name, items_keyword) = command(index, false);
                let mut cmd = redis::cmd(name);
                cmd.arg(&names[index]);
                if items_keyword {
                    cmd.arg("ITEMS");
                }
                let _: Vec<i64> = cmd.arg(part).query(con).unwrap();
            }
        }
    }
    let answers = |con: &mut dyn ConnectionLike, items: &[Vec<u8>]| -> Vec<Vec<i64>> {
        batches(items)
            .iter()
            .enumerate()
            .map(|(index, batch)| {
                let (name, _) = command(index, true);
                redis::cmd(name)
                    .arg(&names[index])
                    .arg(batch)
                    .query(con)
                    .unwrap()
            })
            .collect()
    };
    let present = answers(&mut clustered, &inserted);
    assert!(
        present.iter().flatten().all(|&answer| answer == 1),
        "a false negative"
    );
    assert_eq!(
        answers(&mut clustered, &absent),
        answers(&mut node, &absent)
    );
    let cards: Vec<i64> = names
        .iter()
        .step_by(2)
        .map(|name| {
            redis::cmd("BF.CARD")
                .arg(name)
                .query(&mut clustered)
                .unwrap()
        })
        .collect();
    let expected: Vec<i64> = names
        .iter()
        .step_by(2)
        .map(|name| redis::cmd("BF.CARD").arg(name).query(&mut node).unwrap())
        .collect();
    assert_eq!(cards, expected);
    let _: i64 = clustered.del(&names[0]).unwrap();
}

/// Every master holds some of the filters `names` (slots 0-5461, 5462-10923
/// and 10924-16383 go to the three masters `redis-cli --cluster create`
/// makes).
fn assert_spans_the_masters(clustered: &mut impl ConnectionLike, names: &[String]) {
    let mut served = std::collections::BTreeSet::new();
    for name in names {
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(name)
            .query(clustered)
            .unwrap();
        served.insert(slot / 5462);
    }
    assert_eq!(
        served.len(),
        3,
        "the filters' slots do not span the masters"
    );
}
