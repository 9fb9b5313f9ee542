#!/usr/bin/env bash
# Measures every function definition under a source tree with universal-ctags (its `end:` field)
# and prints those longer than a limit, longest first, as "LINES path:first-line name". With
# --classes it measures class, struct and union definitions instead (default limit 250).
#
#   scripts/function-lengths.sh [--classes] [--max N] [--allowlist FILE] [DIR...]
#                                                        (default: --max 150 src; --classes: 250)
#
# Exit status: 0 nothing over the limit (or only allowlisted ones), 1 one over the limit that is
# not on the allowlist, or an allowlist entry that is no longer over it (shrink the list),
# 2 bad arguments, 77 universal-ctags missing (CTest reads 77 as "skipped").
# Allowlist lines are "path name" as printed (e.g. "src/task/task.cpp kevo::parse_task"); '#' starts
# a comment. Names are qualified by namespace and class; anonymous namespaces are left out, so a
# name does not change when the compiler's hash for them does.
set -euo pipefail
max=""
allow=""
what=functions
dirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --classes) what=classes; shift ;;
    --max) max="${2:?--max needs a number}"; shift 2 ;;
    --allowlist) allow="${2:?--allowlist needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "function-lengths: unknown option $1" >&2; exit 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
[ ${#dirs[@]} -gt 0 ] || dirs=(src)
if [ "$what" = classes ]; then
  # CUDA's parser has no class kind: its structs and unions are measured.
  kinds=(--kinds-C++=csu --kinds-CUDA=su); max="${max:-250}"
else
  kinds=(--kinds-C++=f --kinds-CUDA=f); max="${max:-150}"
fi
case "$max" in ''|*[!0-9]*) echo "function-lengths: --max wants a number" >&2; exit 2 ;; esac
[ -z "$allow" ] || [ -f "$allow" ] || { echo "function-lengths: no allowlist $allow" >&2; exit 2; }

ctags=""
for c in ctags-universal universal-ctags ctags; do
  if command -v "$c" >/dev/null && "$c" --version 2>/dev/null | grep -q 'Universal Ctags'; then
    ctags="$c"; break
  fi
done
[ -n "$ctags" ] || { echo "function-lengths: universal-ctags not found (apt-get install universal-ctags)" >&2; exit 77; }

tab=$'\t'
# Definitions of the kinds measured in C++ and CUDA files; headers are C++ here, not C.
measured="$("$ctags" -R --languages=C++,CUDA --langmap=C++:+.h "${kinds[@]}" \
  --fields=+ne -x --_xformat="%F${tab}%n${tab}%{end}${tab}%{scope}${tab}%N" "${dirs[@]}" |
  awk -F'\t' -v max="$max" '
    $3 ~ /^[0-9]+$/ {
      len = $3 - $2 + 1
      if (len <= max) next
      n = split($4, parts, "::"); q = ""
      for (i = 1; i <= n; i++) if (parts[i] != "" && parts[i] !~ /^__anon/) q = q parts[i] "::"
      printf "%d\t%s\t%d\t%s%s\n", len, $1, $2, q, $5
    }' | sort -t"$tab" -k1,1nr -k2,2 -k3,3n)"

status=0
if [ -n "$measured" ]; then
  while IFS="$tab" read -r len file line name; do
    mark=""
    if [ -n "$allow" ] && grep -v '^[[:space:]]*#' "$allow" | grep -qxF "$file $name"; then
      mark=" (allowlisted)"
    else
      status=1
    fi
    echo "$len $file:$line $name$mark"
  done <<< "$measured"
fi
if [ -n "$allow" ]; then
  # An entry that is not over the limit any more must leave the list, so the list only shrinks.
  while read -r file name rest; do
    [ -n "$file" ] && [ "${file:0:1}" != "#" ] || continue
    if ! printf '%s\n' "$measured" | awk -F'\t' -v f="$file" -v n="$name" '$2 == f && $4 == n {found=1} END {exit !found}'; then
      echo "stale allowlist entry (now <= $max lines or gone): $file $name"
      status=1
    fi
  done < "$allow"
fi
[ "$status" = 0 ] || echo "function-lengths: $what over $max lines must be split (see CONTRIBUTING.md)" >&2
exit "$status"
