#!/usr/bin/env bash
# Packages every published crate as crates.io would receive it, checks that
# each builds from its own tarball, and builds every package's examples from
# the unpacked tarballs.
#
# `cargo publish --workspace --dry-run` packages and verifies the members
# that may be published and skips the ones whose manifest says
# `publish = false` (filterlab-harness, filterlab-peers; fuzz/ is not a
# member): the workspace's own configuration, no list here. (`cargo package
# --workspace` would package the unpublished members too.) The crates
# depend on each other by version; the dry run resolves those from the
# packages it has just made, before any is on crates.io.
#
# Examples are not part of that verification, so the same packages are
# made again as files (`cargo package` of the publishable members), unpacked
# into a scratch workspace whose `[patch.crates-io]` points each filterlab
# dependency at its unpacked package, with this repository's Cargo.lock, and
# `cargo build --examples` builds them as a user of the published crates
# would.
#
# Needs a clean git tree (cargo refuses to package uncommitted changes) and
# the crates.io index. Usage: scripts/check-packages.sh
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}/package-check"
rm -rf "$target/package"
CARGO_TARGET_DIR="$target" cargo publish --workspace --dry-run

# The same packages, as files: the members cargo metadata lists as
# publishable (`publish = false` reads as an empty registry list).
mapfile -t published < <(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
for package in meta["packages"]:
    if package["id"] in members and package["publish"] != []:
        print(package["name"])')
CARGO_TARGET_DIR="$target" cargo package --no-verify $(printf -- '-p %s ' "${published[@]}")

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
members=()
patches=()
for crate in "$target"/package/*.crate; do
    # -m: the files get the time of unpacking, so a build left in the target
    # directory by an earlier run is never taken for this one's.
    tar -xzmf "$crate" -C "$scratch"
    dir="$(basename "$crate" .crate)"
    name="${dir%-*}"
    members+=("\"$dir\"")
    patches+=("$name = { path = \"$dir\" }")
done
{
    echo '[workspace]'
    echo 'resolver = "3"'
    echo "members = [$(IFS=,; echo "${members[*]}")]"
    echo
    echo '[patch.crates-io]'
    printf '%s\n' "${patches[@]}"
} > "$scratch/Cargo.toml"
cp Cargo.lock "$scratch/Cargo.lock"
echo "== the examples of ${#members[@]} packages, built from the unpacked tarballs"
CARGO_TARGET_DIR="$target/examples" cargo build --manifest-path "$scratch/Cargo.toml" \
    --workspace --examples
