#!/usr/bin/env bash
# The official MCP client (@modelcontextprotocol/sdk, from npm) against `kevo mcp`, over stdio and
# Streamable HTTP, with the fake GPU: every tool, the bad inputs, a client that leaves mid-call,
# and what the run database then holds (read back with `kevo show --json`).
#   tests/mcp/sdk_client_test.sh KEVO_BINARY
# Exit 77 (skipped, said on stderr) when node or the SDK cannot be had; 1 on a failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
kevo="$1"
command -v node >/dev/null || { echo "SKIPPED: node is not installed" >&2; exit 77; }
# One install for every test run of this build; flock keeps parallel tests from racing it.
modules=$(flock "$(dirname "$kevo")/../mcp-sdk.lock" "$root/scripts/mcp-sdk.sh" "$(dirname "$kevo")/../mcp-sdk") ||
  { echo "SKIPPED: the MCP SDK could not be installed from npm" >&2; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kevo-mcp-sdk-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
NODE_PATH="$modules" KEVO_BIN="$kevo" SCRATCH="$scratch" node "$root/tests/mcp/sdk_client_test.cjs"
