#!/usr/bin/env bash
# Runs test binaries one at a time, each with a private, empty TMPDIR, and fails if a binary leaves
# anything in it: tests must leave the temporary folder as they found it. Code under test finds
# the folder through std::filesystem::temp_directory_path() / mkdtemp on $TMPDIR / Python's
# tempfile, all of which honour TMPDIR; a name written straight into /tmp is not caught here, so
# new entries in /tmp are listed too (as a hint: other processes on the machine make them too).
#
#   scripts/tmp-hygiene.sh [--build DIR] [--gpu] [NAME...]
#
# NAME: test binaries by file name (e.g. util_test); default: every test binary built under
# DIR/tests (default DIR: build), without GPU ones (tests/gpu/, *_gpu_*) unless --gpu.
# Exit status: 0 nothing left behind, 1 something left (listed per binary), 2 bad arguments or
# nothing to run. A failing test binary is reported but is not a hygiene failure by itself.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
gpu=0
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "${2:?--build needs a folder}" && pwd)" || exit 2; shift 2 ;;
    --gpu) gpu=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "tmp-hygiene: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[ -d "$build/tests" ] || { echo "tmp-hygiene: no $build/tests (build the tests first)" >&2; exit 2; }

bins=()
while IFS= read -r b; do
  n="$(basename "$b")"
  if [ ${#names[@]} -gt 0 ]; then
    [[ " ${names[*]} " == *" $n "* ]] && bins+=("$b")
  elif [ "$gpu" = 1 ] || { [[ "$b" != */tests/gpu/* ]] && [[ "$n" != *_gpu_* ]]; }; then
    bins+=("$b")
  fi
done < <(find "$build/tests" -type f -executable -name '*_test' | sort)
[ ${#bins[@]} -gt 0 ] || { echo "tmp-hygiene: no test binaries to run" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ls -A /tmp > "$work/tmp-before"
left=0
for b in "${bins[@]}"; do
  n="$(basename "$b")"
  mkdir -p "$work/t/$n"
  (cd "$(dirname "$b")" && TMPDIR="$work/t/$n" KEVO_HOME="${KEVO_HOME:-$root}" "$b" --gtest_brief=1 \
     > "$work/$n.log" 2>&1)
  rc=$?
  found="$(cd "$work/t/$n" && find . -mindepth 1 -maxdepth 2 | sed 's|^\./||' | sort)"
  if [ -n "$found" ]; then
    left=1
    echo "LEFT $n (exit $rc):"
    printf '%s\n' "$found" | head -20 | sed 's/^/    /'
  else
    echo "clean $n (exit $rc)"
  fi
  [ "$rc" = 0 ] || tail -5 "$work/$n.log" | sed 's/^/    | /'
done
ls -A /tmp > "$work/tmp-after"
new="$(comm -13 "$work/tmp-before" "$work/tmp-after")"
if [ -n "$new" ]; then
  echo "new in /tmp meanwhile (from these tests if they bypass TMPDIR, or from other processes):"
  printf '%s\n' "$new" | head -20 | sed 's/^/    /'
fi
exit "$left"
