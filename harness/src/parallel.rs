//! Runs independent jobs on a few worker threads and returns their results
//! in job order, whatever order they finished in (so the output of a run
//! does not depend on the thread count).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `job(i)` for every `i` in `order` (a permutation of `0..order.len()`,
/// biggest jobs first balances the workers) on `threads` threads; returns
/// the results indexed by `i`.
pub fn map_in_order<R: Send>(
    order: &[usize],
    threads: usize,
    job: impl Fn(usize) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..order.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, order.len().max(1)) {
            scope.spawn(|| {
                while let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let result = job(index);
                    if let Ok(mut results) = results.lock() {
                        results[index] = Some(result);
                    }
                }
            });
        }
    });
    // A panicking job re-panics when the scope ends, so every slot is filled.
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_index_order() {
        let order = [3, 1, 0, 2];
        for threads in [1, 2, 8] {
            assert_eq!(map_in_order(&order, threads, |i| i * 10), [0, 10, 20, 30]);
        }
        assert!(map_in_order(&[], 2, |i| i).is_empty());
    }
}
