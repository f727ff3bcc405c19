//! Records the compiler and profile that build the harness: `filterlab
//! bench` writes them beside its instruction counts, which depend on both.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map_or_else(
            || "unknown".to_owned(),
            |output| String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        );
    println!("cargo:rustc-env=FILTERLAB_RUSTC_VERSION={version}");
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| "unknown".to_owned());
    let assertions = if std::env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some() {
        "on"
    } else {
        "off"
    };
    println!(
        "cargo:rustc-env=FILTERLAB_BUILD={} profile, opt-level {}, debug assertions {assertions}",
        var("PROFILE"),
        var("OPT_LEVEL")
    );
    println!("cargo:rerun-if-changed=build.rs");
}
