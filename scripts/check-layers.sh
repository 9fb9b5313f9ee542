#!/usr/bin/env bash
# Checks that src/ follows the layers in docs/ARCHITECTURE.md: a folder may include (#include
# "other/...") and link (kevo_other in its CMakeLists.txt) only folders on a lower layer, so no
# arrow runs back up and there are no cycles. The table is read from the "## Layers" section's
# lines "N folder folder ...", so the document and the check cannot drift apart.
#
#   scripts/check-layers.sh [REPO_ROOT]
#
# Exit status: 0 clean, 1 an upward or sideways include/link, or a folder missing from the table
# (or a table folder missing from src/).
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
doc="$root/docs/ARCHITECTURE.md"
[ -f "$doc" ] || { echo "check-layers: no $doc" >&2; exit 1; }

declare -A layer
while read -r n folders; do
  for f in $folders; do layer[$f]=$n; done
done < <(awk '/^## Layers/ {on=1; next} /^## / {on=0} on && /^[0-9]+( [a-z_]+)+ *$/' "$doc")
[ ${#layer[@]} -gt 0 ] || { echo "check-layers: no layer lines (\"N folder ...\") under ## Layers in $doc" >&2; exit 1; }

bad=0
for dir in "$root"/src/*/; do
  d="$(basename "$dir")"
  if [ -z "${layer[$d]+x}" ]; then
    echo "src/$d is not in the Layers table of docs/ARCHITECTURE.md"; bad=1; continue
  fi
done
for f in "${!layer[@]}"; do
  [ -d "$root/src/$f" ] || { echo "Layers table names $f, which is not a folder of src/"; bad=1; }
done

# "file:line:folder" for every include whose path starts with a folder name; only src/ folders count.
while IFS=: read -r file line dep; do
  d="${file#"$root"/src/}"; d="${d%%/*}"
  [ "$dep" = "$d" ] || [ -z "${layer[$d]+x}" ] || [ ! -d "$root/src/$dep" ] && continue  # third-party
  if [ -z "${layer[$dep]+x}" ] || [ "${layer[$dep]}" -ge "${layer[$d]}" ]; then
    echo "${file#"$root"/}:$line: $d (layer ${layer[$d]}) includes $dep (layer ${layer[$dep]:-?})"; bad=1
  fi
done < <(grep -rnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][a-z_]+/' "$root/src" |
         sed -E 's/^([^:]*):([0-9]+):.*["<]([a-z_]+)\/$/\1:\2:\3/' || true)

# Links: every kevo_<module> named in a folder's CMakeLists.txt (its libraries and executables).
for cm in "$root"/src/*/CMakeLists.txt; do
  d="$(basename "$(dirname "$cm")")"
  [ -n "${layer[$d]+x}" ] || continue
  for dep in $(grep -oE 'kevo_[a-z_]+' "$cm" | sed 's/^kevo_//' | sort -u); do
    [ "$dep" = "$d" ] && continue
    [ -d "$root/src/$dep" ] || continue  # not a module (e.g. a variable)
    if [ -z "${layer[$dep]+x}" ] || [ "${layer[$dep]}" -ge "${layer[$d]}" ]; then
      echo "src/$d/CMakeLists.txt: $d (layer ${layer[$d]}) links kevo_$dep (layer ${layer[$dep]:-?})"; bad=1
    fi
  done
done
[ "$bad" = 0 ] && echo "check-layers: src/ follows the layers of docs/ARCHITECTURE.md"
exit "$bad"
