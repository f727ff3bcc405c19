#!/usr/bin/env bash
# The benchmark gate, as .ci/run and .github/workflows/bench.yml both run it.
#
#   scripts/bench-ci.sh OUT_DIR [MARKDOWN_FILE]
#
# Counts the CI subset of `filterlab bench` under Valgrind (every filter in
# cache, two beyond the simulated last-level cache) and compares the counts
# with reports/bench-baseline.csv: it fails naming each filter, operation,
# mode and size whose instructions per operation rose by more than 1% or
# whose estimated cycles rose by more than 3%. It also times two filters
# against their peers in alternating rounds (a process a round); a ratio
# fails when it lies more than 25% past the range of the runs in
# reports/bench-wall-baseline.csv, compared only on the CPU that made it.
# The tables go to stdout and, as Markdown, to MARKDOWN_FILE (a CI job
# summary); the CSV files and the charts to OUT_DIR.
#
# Counts depend on the compiler and Valgrind: the baseline records both, and
# the output says when this run's differ (the workflow installs the rustc the
# baseline names). Valgrind is installed from the OS packages when missing
# (CI runs as root on Debian; elsewhere apt-get goes through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:?usage: scripts/bench-ci.sh OUT_DIR [MARKDOWN_FILE]}"
markdown="${2:-}"

if ! command -v valgrind >/dev/null 2>&1; then
    as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind
fi
valgrind --version

args=(bench --ci --check --wall --out "$out")
if [ -n "$markdown" ]; then
    args+=(--markdown "$markdown")
fi
cargo build --release -p filterlab-harness --bin filterlab
time target/release/filterlab "${args[@]}"
