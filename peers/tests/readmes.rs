//! Every README's Rust code compiles exactly as GitHub shows it.
//!
//! The blocks are compiled and run by rustdoc, as doctests of the crate
//! whose docs include the README (`#![doc = include_str!("../README.md")]`;
//! the repository's own README is included by this crate). This test
//! extracts every ` ```rust ` block of every README in the repository and
//! checks what makes that compilation the code a reader sees and pastes:
//!
//! - no line rustdoc hides (`# ` or a lone `#`), which GitHub shows and
//!   which would not compile pasted;
//! - a `fn main` of its own, so rustdoc compiles the block as written
//!   rather than wrapping it in one;
//! - nothing but `rust` or `rust,no_run` in the fence (no `ignore`), so
//!   every block is compiled;
//! - the README is included as docs by some crate, so its blocks are
//!   doctests at all;
//!
//! and that every `cargo run -p <package> --example <name>` and
//! `cargo bench -p <package> --bench <name>` a README gives names a target
//! that exists.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("peers/ is in the repository")
        .to_path_buf()
}

/// Every file named `name` below `dir`, outside build output and git.
fn files_named(dir: &Path, name: &str, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("a directory entry").path();
        let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(file_name, "target" | ".git" | "corpus" | "artifacts") {
                files_named(&path, name, found);
            }
        } else if file_name == name {
            found.push(path);
        }
    }
}

/// A ` ```rust ` block: the README's line of its fence, the fence's
/// attributes, and its lines.
struct Block {
    line: usize,
    attributes: Vec<String>,
    code: Vec<String>,
}

fn rust_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let code: Vec<String> = lines
            .by_ref()
            .take_while(|(_, line)| !line.starts_with("```"))
            .map(|(_, line)| line.to_owned())
            .collect();
        let attributes: Vec<String> = info.split(',').map(|a| a.trim().to_owned()).collect();
        if attributes.first().is_some_and(|first| first == "rust") {
            blocks.push(Block {
                line: number + 1,
                attributes,
                code,
            });
        }
    }
    blocks
}

/// What is wrong with a block, if anything.
fn faults(block: &Block) -> Vec<String> {
    let mut faults = Vec::new();
    for attribute in &block.attributes[1..] {
        if attribute != "no_run" {
            faults.push(format!(
                "fence attribute `{attribute}` (only `no_run` is allowed)"
            ));
        }
    }
    for line in &block.code {
        let trimmed = line.trim_start();
        if trimmed == "#" || trimmed.starts_with("# ") {
            faults.push(format!("a line rustdoc hides but GitHub shows: `{line}`"));
        }
    }
    if !block.code.iter().any(|line| line.starts_with("fn main(")) {
        faults.push("no `fn main` of its own: rustdoc would wrap it".to_owned());
    }
    faults
}

/// The files the workspace's crates include as docs: every
/// `include_str!("…")` of a `src/lib.rs`, resolved.
fn included_docs() -> BTreeSet<PathBuf> {
    let mut libs = Vec::new();
    files_named(&root(), "lib.rs", &mut libs);
    let mut included = BTreeSet::new();
    for lib in libs {
        let text = fs::read_to_string(&lib).expect("a readable lib.rs");
        for piece in text.split("include_str!(\"").skip(1) {
            let relative = piece.split('"').next().unwrap_or("");
            let path = lib.parent().expect("in src/").join(relative);
            if let Ok(path) = path.canonicalize() {
                included.insert(path);
            }
        }
    }
    included
}

/// Package name → directory, from every `Cargo.toml` with a `[package]`.
fn packages() -> BTreeMap<String, PathBuf> {
    let mut manifests = Vec::new();
    files_named(&root(), "Cargo.toml", &mut manifests);
    let mut packages = BTreeMap::new();
    for manifest in manifests {
        let text = fs::read_to_string(&manifest).expect("a readable manifest");
        let name = text
            .lines()
            .skip_while(|line| line.trim() != "[package]")
            .find_map(|line| line.strip_prefix("name = \""))
            .and_then(|rest| rest.split('"').next());
        if let Some(name) = name {
            let dir = manifest.parent().expect("in a directory").to_path_buf();
            packages.insert(name.to_owned(), dir);
        }
    }
    packages
}

/// `cargo … -p <package> … --<kind> <name>` commands in `text`, as
/// (package, kind, name).
fn targets_named(text: &str) -> Vec<(String, String, String)> {
    let mut named = Vec::new();
    for line in text.lines().filter(|line| line.contains("cargo ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let package = words
            .windows(2)
            .find(|pair| pair[0] == "-p")
            .map(|pair| pair[1].trim_matches('`'));
        for pair in words.windows(2) {
            if let (Some(package), Some(kind)) = (package, pair[0].strip_prefix("--"))
                && (kind == "example" || kind == "bench")
            {
                let name = pair[1].trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
                named.push((package.to_owned(), kind.to_owned(), name.to_owned()));
            }
        }
    }
    named
}

#[test]
fn every_readme_block_compiles_as_shown() {
    let mut readmes = Vec::new();
    files_named(&root(), "README.md", &mut readmes);
    readmes.sort();
    let included = included_docs();
    let packages = packages();
    let (mut blocks, mut problems) = (0, Vec::new());
    for readme in &readmes {
        let text = fs::read_to_string(readme).expect("a readable README");
        let shown = readme
            .strip_prefix(root())
            .unwrap_or(readme)
            .display()
            .to_string();
        let found = rust_blocks(&text);
        blocks += found.len();
        for block in &found {
            for fault in faults(block) {
                problems.push(format!("{shown}:{}: {fault}", block.line));
            }
        }
        let canonical = readme.canonicalize().expect("the README exists");
        if !found.is_empty() && !included.contains(&canonical) {
            problems.push(format!(
                "{shown}: no crate includes it as docs, so its blocks are never compiled"
            ));
        }
        for (package, kind, name) in targets_named(&text) {
            let exists = packages
                .get(&package)
                .is_some_and(|dir| dir.join(format!("{kind}s/{name}.rs")).is_file());
            if !exists {
                problems.push(format!(
                    "{shown}: `-p {package} --{kind} {name}` names no such target"
                ));
            }
        }
    }
    println!("{blocks} Rust blocks in {} READMEs", readmes.len());
    assert!(
        blocks >= 25,
        "only {blocks} blocks found: is the search broken?"
    );
    assert!(
        problems.is_empty(),
        "README problems:\n{}",
        problems.join("\n")
    );
}

/// The checks themselves: a hidden line, a missing `main`, an `ignore`d
/// block and a README line naming a target are each found.
#[test]
fn the_checks_find_what_they_look_for() {
    let text = "```rust,ignore\nlet x = 1;\n# Ok::<(), ()>(())\n```\n```text\n# not rust\n```\n";
    let blocks = rust_blocks(text);
    assert_eq!(blocks.len(), 1);
    assert_eq!(faults(&blocks[0]).len(), 3, "{:?}", faults(&blocks[0]));
    let good =
        rust_blocks("```rust,no_run\nfn main() {\n    #[allow(unused)]\n    let x = 1;\n}\n```");
    assert!(faults(&good[0]).is_empty());
    let named = targets_named("cargo run --release -p filterlab-bloom --example cache_guard -- 10");
    assert_eq!(
        named,
        [(
            "filterlab-bloom".into(),
            "example".into(),
            "cache_guard".into()
        )]
    );
}
