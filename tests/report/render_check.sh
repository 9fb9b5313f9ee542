#!/bin/sh
# Renders the report of a recorded run in a real headless browser (Debian's chromium) and checks
# that the figures from the database appear in the rendered DOM.
# Usage: render_check.sh REPORT_FIXTURE KEVO
set -eu
fixture=$1
kevo=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: chromium not installed"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$("$fixture" "$work/data")
"$kevo" report "$db" -o "$work/report.html" --title "kevo render check"
profile=$(mktemp -d -p "$work")
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
  --dump-dom "file://$work/report.html" > "$work/dom.html" 2> "$work/chromium.log" || {
  echo "FAIL: chromium did not render the report"; cat "$work/chromium.log"; exit 1; }
grep -q "<svg" "$work/dom.html" || { echo "FAIL: no SVG in the rendered DOM"; exit 1; }
grep -q "kevo render check" "$work/dom.html" || { echo "FAIL: title missing from the rendered DOM"; exit 1; }
# Text as the browser parsed it: the escaped candidate source must come back as text, not markup.
grep -qF "&lt;script&gt;alert" "$work/dom.html" || { echo "FAIL: escaped source not in the DOM"; exit 1; }
if grep -q "<script" "$work/dom.html"; then echo "FAIL: a script element in the DOM"; exit 1; fi
missing=0
while IFS= read -r figure; do
  [ -n "$figure" ] || continue
  if grep -qF -- "$figure" "$work/dom.html"; then
    echo "ok: $figure"
  else
    echo "FAIL: $figure not in the rendered DOM"
    missing=1
  fi
done < "$work/data/expected.txt"
exit $missing
