#!/usr/bin/env bash
# The checks in scripts/ can fail: function-lengths.sh (functions and classes), check-layers.sh and
# tmp-hygiene.sh run on small trees made in a temporary folder (removed on exit), with and without
# the faults they catch.
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
t="$(mktemp -d)"; trap 'rm -rf "$t"' EXIT
fail=0
expect() {  # expect RC DESCRIPTION COMMAND...
  local want="$1" what="$2"; shift 2
  "$@" >"$t/out" 2>&1; local rc=$?
  if [ "$rc" = 77 ]; then echo "SKIP: universal-ctags missing"; exit 77; fi
  if [ "$rc" != "$want" ]; then echo "FAIL: $what: exit $rc, wanted $want"; cat "$t/out"; fail=1
  else echo "ok: $what"; fi
}

# function-lengths.sh: a 6-line function in a namespace, a 3-line one in an anonymous namespace.
mkdir -p "$t/fl/src/a"
printf 'namespace kevo {\nint longer(int x) {\n  x += 1;\n  x += 2;\n  x += 3;\n  return x;\n}\n}\n' > "$t/fl/src/a/x.cpp"
printf 'namespace {\nint short_one() {\n  return 1;\n}\n}\n' > "$t/fl/src/a/y.cpp"
cd "$t/fl"
fl="$here/scripts/function-lengths.sh"
expect 0 "nothing over 10 lines" "$fl" --max 10 src
expect 1 "a function over 5 lines" "$fl" --max 5 src
grep -q '^6 src/a/x.cpp:2 kevo::longer$' "$t/out" || { echo "FAIL: report line"; cat "$t/out"; fail=1; }
echo 'src/a/x.cpp kevo::longer' > "$t/allow"
expect 0 "allowlisted" "$fl" --max 5 --allowlist "$t/allow" src
expect 1 "stale allowlist entry" "$fl" --max 6 --allowlist "$t/allow" src
expect 1 "anonymous namespace left out of the name" "$fl" --max 2 --allowlist "$t/allow" src
grep -q ' short_one$' "$t/out" || { echo "FAIL: anonymous name"; cat "$t/out"; fail=1; }

# function-lengths.sh --classes: a 5-line class and a 3-line struct, no functions.
mkdir -p "$t/cl/src/a"
printf 'namespace kevo {\nclass Big {\n public:\n  int a = 1;\n  int b = 2;\n};\nstruct Small {\n  int x;\n};\n}\n' > "$t/cl/src/a/c.h"
cd "$t/cl"
expect 0 "no class over 250 lines (the default)" "$fl" --classes src
expect 1 "a class over 4 lines" "$fl" --classes --max 4 src
grep -q '^5 src/a/c.h:2 kevo::Big$' "$t/out" || { echo "FAIL: class report line"; cat "$t/out"; fail=1; }
expect 1 "a struct over 2 lines" "$fl" --classes --max 2 src
grep -q '^3 src/a/c.h:7 kevo::Small$' "$t/out" || { echo "FAIL: struct report line"; cat "$t/out"; fail=1; }
echo 'src/a/c.h kevo::Big' > "$t/allow-classes"
expect 1 "a struct beside an allowlisted class" "$fl" --classes --max 2 --allowlist "$t/allow-classes" src
expect 0 "class allowlisted" "$fl" --classes --max 4 --allowlist "$t/allow-classes" src
expect 1 "stale class allowlist entry" "$fl" --classes --max 5 --allowlist "$t/allow-classes" src
expect 0 "classes are not functions" "$fl" --max 1 src

# check-layers.sh: util (0) <- task (1); an upward include, a sideways link, an unlisted folder.
r="$t/ly"; mkdir -p "$r/docs" "$r/src/util" "$r/src/task"
printf '# x\n## Layers\n```text\n1 task\n0 util\n```\n## Next\n' > "$r/docs/ARCHITECTURE.md"
echo '#include "util/result.h"' > "$r/src/task/t.h"
echo 'target_link_libraries(kevo_task PUBLIC kevo_util)' > "$r/src/task/CMakeLists.txt"
echo '#include <fmt/format.h>' > "$r/src/util/u.h"
cl="$here/scripts/check-layers.sh"
expect 0 "layers respected" "$cl" "$r"
echo '#include "task/t.h"' >> "$r/src/util/u.h"
expect 1 "upward include" "$cl" "$r"
sed -i '$d' "$r/src/util/u.h"; mkdir "$r/src/extra"
expect 1 "folder missing from the table" "$cl" "$r"
rmdir "$r/src/extra"; echo 'target_link_libraries(kevo_util PUBLIC kevo_task)' > "$r/src/util/CMakeLists.txt"
expect 1 "upward link" "$cl" "$r"

# tmp-hygiene.sh: a fake build folder with one test binary that cleans up and one that does not.
b="$t/build"; mkdir -p "$b/tests/a"
printf '#!/bin/sh\nmkdir "$TMPDIR/x" && rmdir "$TMPDIR/x"\n' > "$b/tests/a/clean_test"
printf '#!/bin/sh\ntouch "$TMPDIR/leftover"\n' > "$b/tests/a/leaky_test"
chmod +x "$b/tests/a/clean_test" "$b/tests/a/leaky_test"
th="$here/scripts/tmp-hygiene.sh"
expect 0 "a binary that cleans up" "$th" --build "$b" clean_test
expect 1 "a binary that leaves a file" "$th" --build "$b"
grep -q 'LEFT leaky_test' "$t/out" && grep -q 'leftover' "$t/out" || { echo "FAIL: leftover not named"; cat "$t/out"; fail=1; }
exit "$fail"
