#!/usr/bin/env bash
# Installs the official MCP SDK (@modelcontextprotocol/sdk) at the version kevo's MCP tests pass
# with into DIR (default build/mcp-sdk), unless that version is there already, and prints DIR's
# node_modules path (for NODE_PATH). Exit 2: npm is missing or could not install.
#   scripts/mcp-sdk.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${1:-build/mcp-sdk}"
VERSION="${KEVO_MCP_SDK_VERSION:-1.32.2}"
command -v npm >/dev/null || { echo "mcp-sdk: npm is not installed (apt-get install nodejs npm)" >&2; exit 2; }
pkg="$DIR/node_modules/@modelcontextprotocol/sdk/package.json"
have=""
[ -f "$pkg" ] && have=$(node -p "require('$(realpath "$pkg")').version" 2>/dev/null || true)
if [ "$have" != "$VERSION" ]; then
  rm -rf "$DIR"
  mkdir -p "$DIR"
  # npm's lock keeps two installers (ctest -j) from writing one folder at once.
  if ! (cd "$DIR" && npm install --silent --no-audit --no-fund --prefix . "@modelcontextprotocol/sdk@$VERSION" >&2); then
    echo "mcp-sdk: npm install @modelcontextprotocol/sdk@$VERSION failed" >&2
    rm -rf "$DIR"
    exit 2
  fi
fi
realpath "$DIR/node_modules"
