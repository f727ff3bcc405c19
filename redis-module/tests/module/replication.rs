//! A replica answers as its master: after the full sync (the data types'
//! RDB) and after the writes that follow it (replicated commands).

use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::Connection;

use crate::persistence::{populate, snapshot};
use crate::{connect, insert_all, int, items, module_args, ok, start_with};

/// Waits until the replica has applied everything the master wrote.
fn wait_synced(master: &mut Connection, replica: &mut Connection) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(replica)
            .unwrap();
        if info.contains("master_link_status:up") {
            let acked: i64 = redis::cmd("WAIT").arg(1).arg(1000).query(master).unwrap();
            if acked >= 1 {
                return;
            }
        }
        sleep(Duration::from_millis(20));
    }
    panic!("the replica did not sync");
}

#[test]
fn a_replica_answers_as_its_master() {
    // The master sends the full sync at once: by default it waits 5 s for
    // more replicas to join it.
    let mut args: Vec<String> = ["--repl-diskless-sync-delay", "0"]
        .map(str::to_owned)
        .into();
    args.extend(module_args(&[]));
    let Some(master) = start_with(false, &args) else {
        return;
    };
    let mut con = connect(&master);
    populate(&mut con);
    let port = master.port().expect("a private server").to_string();
    let mut args = module_args(&[]);
    args.extend(["--replicaof", "127.0.0.1", &port].map(str::to_owned));
    let Some(replica) = start_with(false, &args) else {
        return;
    };
    let mut replica_con = connect(&replica);
    wait_synced(&mut con, &mut replica_con);
    assert_eq!(
        snapshot(&mut replica_con),
        snapshot(&mut con),
        "after the full sync"
    );
    // Writes after the sync reach the replica as commands.
    insert_all(&mut con, &["BF.MADD", "bf:grown"], &items("later", 0..3000));
    insert_all(
        &mut con,
        &["CF.INSERT", "cf:grown", "ITEMS"],
        &items("later", 0..3000),
    );
    for i in 300..600 {
        int(&mut con, &format!("CF.DEL cf:grown c{i}"));
    }
    ok(&mut con, "BF.RESERVE bf:fixed2 0.01 100 NONSCALING");
    int(&mut con, "BF.ADD bf:made x");
    // The restore under way completes on both.
    let mut chunks = Vec::new();
    loop {
        let cursor = chunks.last().map_or(0, |chunk: &(i64, Vec<u8>)| chunk.0);
        let (next, data): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
            .arg("bf:grown")
            .arg(cursor)
            .query(&mut con)
            .unwrap();
        if next == 0 {
            break;
        }
        chunks.push((next, data));
    }
    for (cursor, data) in &chunks {
        let _: () = redis::cmd("BF.LOADCHUNK")
            .arg("bf:copy")
            .arg(cursor)
            .arg(data)
            .query(&mut con)
            .unwrap();
    }
    wait_synced(&mut con, &mut replica_con);
    assert_eq!(
        snapshot(&mut replica_con),
        snapshot(&mut con),
        "after the writes"
    );
    let digest =
        |con: &mut Connection| -> String { redis::cmd("DEBUG").arg("DIGEST").query(con).unwrap() };
    assert_eq!(digest(&mut replica_con), digest(&mut con));
}
