fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap();
    let target = filterlab_fuzz::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1;
    for p in args {
        let b = std::fs::read(&p).unwrap();
        let t = std::time::Instant::now();
        let r = std::panic::catch_unwind(|| target(&b));
        println!(
            "{p}: {} in {:?}",
            if r.is_ok() { "ok" } else { "PANIC" },
            t.elapsed()
        );
    }
}
