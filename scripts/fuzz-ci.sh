#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ briefly, as .ci/run does (see fuzz/README.md).
#
#   scripts/fuzz-ci.sh [SECONDS_PER_TARGET]      (default 30, or $FUZZ_SECONDS)
#
# libFuzzer's random seed is fixed (1, or $FUZZ_SEED; 0 picks a random one),
# so a CI run replays the same mutations whatever commit it checks: CI is
# the regression gate, and it fails for a change, not for the luck of a
# seed. Exploration with random seeds and longer runs is done apart (see
# fuzz/README.md), and each finding joins fuzz/regressions/.
#
# Each target starts from a scratch copy of its committed corpus
# (fuzz/corpus/<target>/) plus its committed regression inputs
# (fuzz/regressions/<target>/, read only), so the run never dirties the tree.
# Targets are listed by `cargo fuzz list`: a new [[bin]] in fuzz/Cargo.toml is
# picked up with no change here. $FUZZ_TARGETS (space- or comma-separated
# target names) runs only those, e.g. the ones a change touched:
#
#   FUZZ_SEED=0 FUZZ_TARGETS=decode_cuckoo,build_cuckoo scripts/fuzz-ci.sh 600
#
# A crash, a unit slower than 1 s or more than 2 GiB of memory fails the run;
# the reproducers are printed in base64 and kept under $FUZZ_ARTIFACTS when
# that is set.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-${FUZZ_SECONDS:-30}}"
seed="${FUZZ_SEED:-1}"

# cargo-fuzz drives libFuzzer, which needs a nightly toolchain; install both
# when missing.
if ! cargo +nightly --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# The targets' own checks: the seed encoding matches `arbitrary`, resealing
# matches the writer, every target has a [[bin]] and seeds. Stable
# toolchain, the fuzz crate's own lockfile. The replay of the seeds through
# their targets is left to the fuzz runs below, which replay them first and
# report a finding with its input instead of stopping here.
cargo fmt --check --manifest-path fuzz/Cargo.toml
cargo clippy --locked --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
cargo test --locked --manifest-path fuzz/Cargo.toml -- --skip committed_seeds_pass

# One build of every target (address sanitizer, debug assertions and
# overflow checks on: cargo-fuzz's defaults).
cargo +nightly fuzz build

targets="$(cargo +nightly fuzz list)"
if [ -n "${FUZZ_TARGETS:-}" ]; then
    for target in ${FUZZ_TARGETS//,/ }; do
        if ! grep -qx "$target" <<<"$targets"; then
            echo "fuzz: no target named $target (cargo fuzz list: $(echo $targets))" >&2
            exit 2
        fi
    done
    targets="${FUZZ_TARGETS//,/ }"
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in $targets; do
    corpus="$scratch/$target/corpus"
    artifacts="${FUZZ_ARTIFACTS:-$scratch/artifacts}/$target"
    mkdir -p "$corpus" "$artifacts"
    if [ -d "fuzz/corpus/$target" ]; then
        cp -R "fuzz/corpus/$target/." "$corpus/"
    fi
    inputs=("$corpus")
    if [ -d "fuzz/regressions/$target" ]; then
        inputs+=("fuzz/regressions/$target")
    fi
    echo "-- fuzz $target for ${seconds}s, seed $seed ($(find "${inputs[@]}" -type f | wc -l) inputs)"
    if cargo +nightly fuzz run "$target" "${inputs[@]}" -- \
        -max_total_time="$seconds" -seed="$seed" -timeout=1 -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 \
        >"$scratch/$target.log" 2>&1; then
        grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$scratch/$target.log" || true
    else
        failed+=("$target")
        # The finding: the panic or libFuzzer's error, the filterlab frames of
        # its stack, and the input.
        grep -E -A2 'panicked at|==[0-9]+== ERROR' "$scratch/$target.log" | head -n 12 || true
        grep -E '^ +#[0-9]+ .* in .*filterlab' "$scratch/$target.log" | head -n 12 || true
        for input in "$artifacts"/*; do
            [ -f "$input" ] || continue
            echo "reproducer $input (base64; replay with: cargo +nightly fuzz run $target FILE):"
            base64 -w0 "$input"
            echo
        done
    fi
done

if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzz: findings in ${failed[*]}"
    exit 1
fi
echo "fuzz: $(wc -w <<<"$targets") targets ran ${seconds}s each without a finding"
