#!/usr/bin/env bash
# bench/throughput.sh end to end without a GPU (KEVO_THROUGHPUT_FAKE=1: kevo's --fake-gpu against
# the scripted model server), its per-run split (bench/search_split.py), and the clear errors of
# search_split.py and first_result.py on bad input. Leaves nothing behind.
#   tests/bench/bench_scripts_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
SRC=$(realpath "$1"); B=$(realpath "$2")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export HOME=$T/home KEVO_CACHE_DIR=$T/cache KEVO_RUNNER_POOL=off
mkdir -p "$HOME"
cd "$SRC" || exit 1
fails=0
check() {  # description, then a command that must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

KEVO_THROUGHPUT_FAKE=1 LATENCIES=0 IN_FLIGHT=2 CANDIDATES=4 bench/throughput.sh "$B" "$T/tp" > "$T/tp.txt" 2>&1
rc=$?
cat "$T/tp.txt"
check "throughput.sh exits 0" test "$rc" -eq 0
check "a THROUGHPUT line for the setting" grep -q "^THROUGHPUT latency 0s in-flight 2: .* candidates/min" "$T/tp.txt"
check "the run's split names its 4 verdicts" grep -q "^run 1: 4 verdicts" "$T/tp/L0-P2.split.txt"

python3 bench/search_split.py "$T/tp/L0-P2.db" 7 > "$T/out" 2>&1
check "search_split: an absent run is exit 2" test $? -eq 2
check "  ... and named" grep -q "no run 7" "$T/out"
python3 bench/search_split.py "$T/none.db" > "$T/out" 2>&1
check "search_split: an absent database is exit 2, named" grep -q "none.db: no such run database" "$T/out"
python3 bench/first_result.py "$T" "$T/fr" > "$T/out" 2>&1
check "first_result: an unbuilt build dir is refused" grep -q "bin/kevo is not built" "$T/out"
check "  ... before anything is written" test ! -e "$T/fr"

echo "$fails failed"
((fails == 0))
