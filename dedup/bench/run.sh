#!/usr/bin/env bash
# The dedup benchmark: one input file, three tools, lines per second and
# peak memory of each, measured by /usr/bin/time -v.
#
#   dedup/bench/run.sh                    # 3e7 lines, 1.5e7 uniques, P = 1e-6
#   LINES=3000000 UNIQUES=1500000 dedup/bench/run.sh   # a quick run
#
# Environment: LINES, UNIQUES, FPP (P), DATA (the input file, default under
# /tmp, deleted at the end unless KEEP=1), RESULTS (a directory for the
# outputs and logs, deleted at the end unless KEEP=1).
#
# The tools, each reading the file by name, writing the unique lines to a file:
#   dedup -n UNIQUES -p FPP FILE          (power-of-two sizing, as the operator)
#   awk '!seen[$0]++' FILE                (the system awk)
#   LC_ALL=C sort -u FILE                 (GNU sort: byte order, sorted output)
set -euo pipefail

LINES=${LINES:-30000000}
UNIQUES=${UNIQUES:-15000000}
FPP=${FPP:-1e-6}
DATA=${DATA:-/tmp/dedup-bench-input-$$.txt}
RESULTS=${RESULTS:-$(mktemp -d /tmp/dedup-bench-XXXXXX)}
KEEP=${KEEP:-0}

cd "$(dirname "$0")/../.."

cleanup() {
    if [ "$KEEP" != 1 ]; then
        rm -f "$DATA"
        rm -rf "$RESULTS"
    fi
}
trap cleanup EXIT

if [ ! -x /usr/bin/time ]; then
    echo "installing GNU time (Debian package 'time')" >&2
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y time >/dev/null || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
    else
        echo "run: sudo apt-get install time" >&2
        exit 1
    fi
fi

cargo build --release --quiet -p filterlab-dedup --bin dedup
# The input generator is a measurement program: it lives in filterlab-peers.
cargo build --release --quiet -p filterlab-peers --example dedup_input
DEDUP=target/release/dedup

echo "generating $LINES lines with $UNIQUES uniques into $DATA" >&2
target/release/examples/dedup_input "$LINES" "$UNIQUES" > "$DATA"
BYTES=$(stat -c %s "$DATA")
# Every tool then reads the file from the page cache.
cat "$DATA" > /dev/null

# measure NAME COMMAND...: runs the command with stdout to $RESULTS/NAME.out,
# prints "NAME seconds cpu_seconds peak_kib output_lines" (CPU seconds =
# user + system: what the tool cost, whatever else the machine was running).
measure() {
    local name=$1
    shift
    /usr/bin/time -v -o "$RESULTS/$name.time" "$@" > "$RESULTS/$name.out" 2> "$RESULTS/$name.err"
    local seconds peak lines
    seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, part, ":"); s = 0
        for (i = 1; i <= n; i++) s = s * 60 + part[i]
        print s }' "$RESULTS/$name.time")
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$RESULTS/$name.time")
    peak=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$RESULTS/$name.time")
    lines=$(wc -l < "$RESULTS/$name.out")
    echo "$name $seconds $cpu $peak $lines"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) cores; awk is $(readlink -f "$(command -v awk)"); load average before dedup: $(load)"
RESULT_DEDUP=$(measure dedup "$DEDUP" --no-progress -n "$UNIQUES" -p "$FPP" "$DATA")
echo "load average before awk: $(load)"
RESULT_AWK=$(measure awk awk '!seen[$0]++' "$DATA")
echo "load average before sort: $(load)"
RESULT_SORT=$(measure sort env LC_ALL=C sort -u "$DATA")
echo "load average at the end: $(load)"

echo
echo "input: $LINES lines ($BYTES bytes), $UNIQUES uniques; dedup at P = $FPP"
echo
echo "| tool | wall s | lines/s | CPU s | lines per CPU s | peak RSS | unique lines out |"
echo "|---|---|---|---|---|---|---|"
for result in "$RESULT_DEDUP" "$RESULT_AWK" "$RESULT_SORT"; do
    read -r name seconds cpu peak lines <<< "$result"
    awk -v name="$name" -v s="$seconds" -v c="$cpu" -v kib="$peak" -v out="$lines" -v total="$LINES" 'BEGIN {
        printf "| %s | %.2f | %.0f | %.2f | %.0f | %.1f MiB | %d |\n", name, s, total / s, c, total / c, kib / 1024, out }'
done
echo
read -r _ dedup_s dedup_cpu dedup_kib dedup_lines <<< "$RESULT_DEDUP"
read -r _ awk_s awk_cpu awk_kib _ <<< "$RESULT_AWK"
awk -v ds="$dedup_s" -v dc="$dedup_cpu" -v dk="$dedup_kib" -v as="$awk_s" -v ac="$awk_cpu" -v ak="$awk_kib" -v dl="$dedup_lines" -v u="$UNIQUES" 'BEGIN {
    printf "dedup against awk: %.1fx the throughput (wall; %.1fx per CPU second; target >= 5x), %.3f of the peak memory (target <= 0.1)\n", as / ds, ac / dc, dk / ak
    printf "dedup false positives: %d of %d uniques flagged duplicate (%.2e)\n", u - dl, u, (u - dl) / u }'
grep -A8 "dedup sizing" "$RESULTS/dedup.err" || true
