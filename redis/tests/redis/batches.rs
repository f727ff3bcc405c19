//! Round trips: one script call (EVALSHA) per single-key call and per batch
//! of up to `bits_per_call` bit positions, counted by the server itself.

use filterlab_core::keys::{insert_key, query_key};

use crate::{Server, assert_all_contained, create, private_server};

/// Server-side EVALSHA calls made by `step`.
fn script_calls(server: &Server, step: impl FnOnce()) -> u64 {
    let before = server.command_calls("evalsha").unwrap();
    step();
    server.command_calls("evalsha").unwrap() - before
}

#[test]
fn a_batch_is_one_script_call() {
    let Some(server) = private_server("counting commands", false) else {
        return;
    };
    let mut filter = create(&server, 100_000, 0.01, 1);
    let k = filter.num_hashes() as usize;
    assert_eq!(k, 7);
    let keys: Vec<u64> = (0..9_000).map(|i| insert_key(1, i)).collect();
    // The first call of a script on a server finds it missing (NOSCRIPT),
    // loads it and calls again: once per script and server.
    let calls = script_calls(&server, || {
        filter.insert(&u64::MAX).unwrap();
        filter.contains(&u64::MAX).unwrap();
    });
    assert_eq!(calls, 4);
    // 9,000 keys at k = 7 are 63,000 bit positions: one call.
    let calls = script_calls(&server, || {
        assert_eq!(filter.insert_many(&keys).unwrap(), 9_000);
    });
    assert_eq!(calls, 1);
    let calls = script_calls(&server, || {
        assert_all_contained(&mut filter, &keys);
    });
    assert_eq!(calls, 1);
    let calls = script_calls(&server, || {
        assert!(!filter.insert(&keys[0]).unwrap());
        assert!(filter.contains(&keys[0]).unwrap());
    });
    assert_eq!(calls, 2);
    filter.delete().unwrap();
}

/// Huge batches are split by `bits_per_call`, whole keys per call, and
/// answer exactly as unsplit ones.
#[test]
fn huge_batches_are_chunked() {
    let Some(server) = private_server("counting commands", false) else {
        return;
    };
    let mut whole = create(&server, 100_000, 0.01, 2);
    let mut split = create(&server, 100_000, 0.01, 2);
    // 10 keys of k = 7 per call (75 positions allow 10 whole keys).
    split.set_bits_per_call(75).unwrap();
    let keys: Vec<u64> = (0..1_000).map(|i| insert_key(2, i)).collect();
    let new = whole.insert_many(&keys).unwrap();
    let calls = script_calls(&server, || {
        assert_eq!(split.insert_many(&keys).unwrap(), new);
    });
    assert_eq!(calls, 100);
    let probes: Vec<u64> = (0..100_000).map(|i| query_key(2, i)).collect();
    assert_eq!(
        split.contains_many(&probes).unwrap(),
        whole.contains_many(&probes).unwrap()
    );
    assert_eq!(split.export().unwrap(), whole.export().unwrap());
    // Fewer positions than k still send one whole key per call.
    split.set_bits_per_call(1).unwrap();
    let calls = script_calls(&server, || {
        assert_eq!(split.contains_many(&keys[..5]).unwrap(), [true; 5]);
    });
    assert_eq!(calls, 5);
    whole.delete().unwrap();
    split.delete().unwrap();
}
