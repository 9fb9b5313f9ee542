#!/usr/bin/env bash
# Installs the agent CLIs kevo drives (Claude Code, Codex) at the versions kevo was tested with,
# into DIR (default build/agent-clis), one npm prefix per package so that each can be replaced alone.
# An installed prefix whose version matches is kept, so a second run costs nothing.
# Prints "NAME PATH" for each CLI's executable. Exit 2: npm is missing or could not install.
#   scripts/agent-clis.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${1:-build/agent-clis}"
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
# The versions the CLI episode tests pass with; several settings kevo writes are undocumented, so a
# newer CLI may need them checked again (docs/AGENTS.md).
CLAUDE_CODE_VERSION="${KEVO_CLAUDE_CODE_VERSION:-2.1.332}"
CODEX_VERSION="${KEVO_CODEX_VERSION:-0.169.0}"

command -v npm >/dev/null || { echo "agent-clis: npm is not installed (apt-get install nodejs npm)" >&2; exit 2; }
mkdir -p "$DIR"

install_one() {  # PACKAGE VERSION BIN
  local prefix="$DIR/$(echo "$1" | tr '/@' '__')"
  local have=""
  [ -f "$prefix/node_modules/$1/package.json" ] &&
    have=$(node -p "require('$prefix/node_modules/$1/package.json').version" 2>/dev/null || true)
  if [ "$have" != "$2" ]; then
    rm -rf "$prefix"
    if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "$1@$2" >&2; then
      echo "agent-clis: npm install $1@$2 failed" >&2
      rm -rf "$prefix"
      exit 2
    fi
  fi
  echo "$3 $(cd "$prefix/node_modules/.bin" && pwd)/$3"
}

install_one @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" claude
install_one @openai/codex "$CODEX_VERSION" codex
