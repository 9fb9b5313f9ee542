#!/usr/bin/env bash
# The scale-out benchmark (issue 18) on this machine: candidates/min against workers, through the
# engine, its queue and N worker loops with the fake evaluator at a fixed wall time per
# evaluation, and the queue's cost per job; against a throwaway PostgreSQL 15 server (durable
# settings: fsync on) and a SQLite file. Needs a build with kevo-bench-queue (any tree: build/bin).
#
#   bench/queue_scaling.sh [BUILD_DIR] [WORKERS] [EVAL_SECONDS]
set -euo pipefail
B=$(realpath "${1:-build}")
WORKERS=${2:-1,2,4,8,16,32}
EVAL_S=${3:-0.2}
BIN=/usr/lib/postgresql/15/bin
dir=$(mktemp -d /tmp/kevo-qbench-XXXXXX)
as_pg=""
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; as_pg="runuser -u postgres --"; fi
cleanup() { $as_pg "$BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
$as_pg "$BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 >/dev/null
$as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o "-k $dir -c listen_addresses='' -c max_connections=200" start >/dev/null
$as_pg "$BIN/createdb" -h "$dir" -U postgres kevo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); kevo $(git rev-parse --short HEAD)"
echo "## PostgreSQL 15 (Unix socket, default durability)"
"$B/bin/kevo-bench-queue" --db "postgresql:///kevo?host=$dir&user=postgres" --workers "$WORKERS" --eval-s "$EVAL_S" --per-worker "${PER_WORKER:-8}"
echo "## SQLite (WAL, one file)"
"$B/bin/kevo-bench-queue" --db "$dir/runs.db" --workers "$WORKERS" --eval-s "$EVAL_S" --per-worker "${PER_WORKER:-8}"
