#!/usr/bin/env bash
# Self-test of the Slurm recipe on one machine, no GPU: a throwaway munge + single-node Slurm
# (slurmctld + slurmd, with 3 stand-in "gpu" GRES: device nodes that are /dev/null, so
# worker.sbatch's --gres=gpu:1 schedules unchanged, one task per "GPU"), a throwaway
# PostgreSQL 15 server on a Unix socket, and a loopback OpenAI-compatible model. It submits scripts/slurm/worker.sbatch as an array of 3
# (`kevo worker --fake-gpu --idle-exit 20`), runs the coordinator here
# (`kevo evolve --fake-gpu --gpus none ... --budget-candidates 12`), then checks that the run
# finished with 12 candidates, that the workers shared the jobs and that the array drained
# (squeue empty, every task COMPLETED with exit 0). Phase 2 runs scripts/slurm/campaign.sh 2:
# coordinator.sbatch as a Slurm job and a worker array that depends on it (6 candidates), and
# checks the same. Phase 3 stops idle workers with SIGTERM, from --signal=B:TERM before a time
# limit and from scancel --batch --signal=TERM, and checks that each exits 0 on it.
# Everything it started is stopped on exit.
#
#   scripts/slurm/selftest.sh [KEVO_BINARY]        # default build-ci/bin/kevo, else build/bin/kevo
#   scripts/slurm/selftest.sh --infra-only         # Slurm, PostgreSQL and the model only (no kevo)
#   KEEP=1 scripts/slurm/selftest.sh               # keep the temp dir (logs, slurm.conf, ...)
#
# Needs root on Debian 12 (apt-get installs slurm-wlm, munge and postgresql-15 when missing).
# Prints PASS or FAIL and the time of each step; exit 0 only on PASS.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SLURM_DIR="$ROOT/scripts/slurm"
INFRA_ONLY=0
KEVO=""
for a in "$@"; do
  case $a in
    --infra-only) INFRA_ONLY=1 ;;
    -h | --help) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) KEVO=$a ;;
  esac
done
if [[ -z $KEVO ]]; then
  for k in "$ROOT/build-ci/bin/kevo" "$ROOT/build/bin/kevo"; do [[ -x $k ]] && { KEVO=$k; break; }; done
fi
WORKERS=3 CANDIDATES=12 CAMPAIGN_CANDIDATES=6 IDLE_EXIT=20 COORD_TIMEOUT=${COORD_TIMEOUT:-300}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

T0=$(date +%s.%N)
STEPS=()
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "[selftest +$(elapsed "$T0")s] $*"; }
FAILS=()
fail() { FAILS+=("$*"); echo "[selftest] FAIL: $*" >&2; }
step_t=$T0
step_done() { STEPS+=("$(printf '%-34s %6ss' "$1" "$(elapsed "$step_t")")"); step_t=$(date +%s.%N); }
die() {
  fail "$*"
  exit 1  # the EXIT trap cleans up and prints the verdict
}

[[ $(id -u) -eq 0 ]] || { echo "selftest: run as root (it starts munged, slurmctld, slurmd and a PostgreSQL server)" >&2; exit 2; }
if [[ $INFRA_ONLY -eq 0 ]]; then
  [[ -n $KEVO && -x $KEVO ]] || { echo "selftest: no kevo binary (give its path, or build build-ci/bin/kevo)" >&2; exit 2; }
  KEVO=$(realpath "$KEVO")
  "$KEVO" worker --help >/dev/null 2>&1 || { echo "selftest: $KEVO has no working 'worker' command" >&2; exit 2; }
fi

# --- packages ---------------------------------------------------------------------------------
need=()
for c in slurmctld slurmd sbatch squeue scontrol munged; do command -v $c >/dev/null || need=(slurm-wlm munge); done
[[ -x $PGBIN/initdb && -x $PGBIN/pg_ctl && -x $PGBIN/postgres ]] || need+=(postgresql-15)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
  log "installing ${need[*]} (apt-get)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } >/tmp/kevo-selftest-apt.log 2>&1 ||
    { tail -20 /tmp/kevo-selftest-apt.log; echo "selftest: apt-get install ${need[*]} failed" >&2; exit 2; }
fi
step_done "packages"

# --- temp dir and cleanup ---------------------------------------------------------------------
T=$(mktemp -d /tmp/kevo-slurm-selftest.XXXXXX)
chmod 755 "$T"  # the postgres user reaches its data dir below it
mkdir -p "$T"/{munge,slurm/state,slurm/spool,pg,logs,task,cache}
MUNGE_PID="" CTLD_PID="" SLURMD_PID="" MODEL_PID="" PG_STARTED=0 ARRAY=""
export SLURM_CONF="$T/slurm/slurm.conf"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  log "cleaning up"
  if [[ -n $CTLD_PID ]] && kill -0 "$CTLD_PID" 2>/dev/null; then
    # Jobs first (their processes belong to slurmd's steps), then the daemons.
    if [[ -n $(squeue -h -o %i 2>/dev/null) ]]; then
      # shellcheck disable=SC2046  # one job id per word
      scancel --full $(squeue -h -o %A 2>/dev/null | sort -u) 2>/dev/null
      for _ in $(seq 1 40); do [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.5; done
    fi
  fi
  for p in "$SLURMD_PID" "$CTLD_PID" "$MODEL_PID"; do
    [[ -n $p ]] && kill "$p" 2>/dev/null && for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
  done
  if [[ $PG_STARTED -eq 1 ]]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" stop -D "$T/pg/data" -m fast -w >/dev/null 2>&1
  fi
  [[ -n $MUNGE_PID ]] && kill "$MUNGE_PID" 2>/dev/null
  if ((${#FAILS[@]} == 0)) && [[ $rc -eq 0 ]]; then VERDICT=PASS; else VERDICT=FAIL; fi
  echo
  echo "=== timings"
  printf '  %s\n' "${STEPS[@]}"
  printf '  %-34s %6ss\n' "total" "$(elapsed "$T0")"
  if [[ ${KEEP:-0} == 1 || $VERDICT == FAIL ]]; then
    echo "kept $T (logs in $T/logs, Slurm's in $T/slurm)"
  else
    rm -rf "$T"
  fi
  if [[ $VERDICT == PASS ]]; then
    echo "selftest: PASS"
    exit 0
  fi
  printf 'selftest: FAIL: %s\n' "${FAILS[@]:-exit status $rc}"
  exit 1
}
trap cleanup EXIT
trap 'fail "interrupted"; exit 130' INT TERM

check_completed() {  # check_completed JOBID N WHAT: N tasks, each COMPLETED with exit 0:0
  local lines n_done n_ok
  lines=$(scontrol -o show job "$1" 2>/dev/null)
  echo "$lines" | sed -E 's/^JobId=([0-9]+) (ArrayJobId=([0-9]+) ArrayTaskId=([0-9]+) )?.*JobState=([A-Z_]+).*ExitCode=([0-9:]+).*/  job \1 \3_\4: \5, exit \6/; s/ _:/:/'
  n_done=$(echo "$lines" | grep -c 'JobState=COMPLETED')
  n_ok=$(echo "$lines" | grep -c ' ExitCode=0:0')
  [[ $n_done -eq $2 ]] || fail "$3 $1: $n_done of $2 task(s) COMPLETED"
  [[ $n_ok -eq $2 ]] || fail "$3 $1: $n_ok of $2 task(s) exited 0:0"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for SECONDS COMMAND...: polls COMMAND until it succeeds
  local secs=$1; shift
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS >= end)) && return 1
    sleep 0.5
  done
}

# --- munge ------------------------------------------------------------------------------------
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --foreground --force --socket="$T/munge/munge.sock" --key-file="$T/munge/munge.key" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" --seed-file="$T/munge/munged.seed" \
  >"$T/logs/munged.out" 2>&1 &
MUNGE_PID=$!
wait_for 15 bash -c "munge -S '$T/munge/munge.sock' -n | unmunge -S '$T/munge/munge.sock'" ||
  die "munged did not start: $(tail -3 "$T/munge/munged.log" "$T/logs/munged.out" 2>/dev/null)"
step_done "munge"

# --- Slurm: one node of 16 CPUs (whatever the machine has: config_overrides; worker.sbatch asks
# --- 4 per task) and 3 stand-in GPUs ---------------------------------------------------------
HOST=$(hostname -s)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
while [[ $SLURMD_PORT == "$CTLD_PORT" ]]; do SLURMD_PORT=$(free_port); done
: >"$T/slurm/plugstack.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=kevoselftest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
StateSaveLocation=$T/slurm/state
SlurmdSpoolDir=$T/slurm/spool
SlurmctldPidFile=$T/slurm/slurmctld.pid
SlurmdPidFile=$T/slurm/slurmd.pid
SlurmctldLogFile=$T/slurm/slurmctld.log
SlurmdLogFile=$T/slurm/slurmd.log
PlugStackConfig=$T/slurm/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$T/slurm/jobcomp.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
KillWait=10
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=kevo-node NodeAddr=127.0.0.1 NodeHostname=$HOST CPUs=16 RealMemory=4000 Gres=gpu:3 State=UNKNOWN
PartitionName=selftest Nodes=kevo-node Default=YES MaxTime=INFINITE State=UP
EOF
# Slurm drops a GPU GRES without device files; these stand in for /dev/nvidia0..2 (plain files
# also count, with an error in slurmd's log, where mknod is not allowed).
mkdir -p "$T/slurm/dev"
for i in 0 1 2; do mknod "$T/slurm/dev/nvidia$i" c 1 3 2>/dev/null || : >"$T/slurm/dev/nvidia$i"; done
echo "NodeName=kevo-node Name=gpu File=$T/slurm/dev/nvidia[0-2]" >"$T/slurm/gres.conf"
slurmctld -D -c -i -f "$SLURM_CONF" >"$T/logs/slurmctld.out" 2>&1 &
CTLD_PID=$!
wait_for 30 scontrol ping || die "slurmctld did not answer: $(tail -5 "$T/slurm/slurmctld.log" "$T/logs/slurmctld.out" 2>/dev/null)"
slurmd -D -N kevo-node -f "$SLURM_CONF" >"$T/logs/slurmd.out" 2>&1 &
SLURMD_PID=$!
node_idle() { [[ $(sinfo -h -n kevo-node -o %T 2>/dev/null) == idle ]]; }
wait_for 60 node_idle ||
  die "the node did not become idle ($(sinfo -h -o '%T %E' 2>&1)): $(tail -5 "$T/slurm/slurmd.log" "$T/logs/slurmd.out" 2>/dev/null)"
log "Slurm up: $(sinfo -h -o '%P %D %T %G')"
step_done "slurmctld + slurmd"

# --- PostgreSQL 15 on a Unix socket ---------------------------------------------------------
mkdir -p "$T/pg/data" "$T/pg/sock"
chown -R postgres: "$T/pg"
runuser -u postgres -- "$PGBIN/initdb" -D "$T/pg/data" -U postgres --auth=trust -E UTF8 >"$T/logs/initdb.out" 2>&1 ||
  die "initdb failed: $(tail -3 "$T/logs/initdb.out")"
runuser -u postgres -- "$PGBIN/pg_ctl" start -D "$T/pg/data" -l "$T/pg/server.log" -w -t 60 \
  -o "-k $T/pg/sock -c listen_addresses=''" >"$T/logs/pg_ctl.out" 2>&1 || die "pg_ctl start failed: $(tail -5 "$T/pg/server.log")"
PG_STARTED=1
runuser -u postgres -- "$PGBIN/createdb" -h "$T/pg/sock" -U postgres kevo || die "createdb failed"
DB="postgresql:///kevo?host=$T/pg/sock&user=postgres"
psql_q() { psql -X -q -t -A -h "$T/pg/sock" -U postgres -d kevo -c "$1"; }
[[ $(psql_q 'SELECT 1') == 1 ]] || die "psql cannot reach the server"
step_done "PostgreSQL"

# --- the loopback model -----------------------------------------------------------------------
cat >"$T/model.py" <<'PY'
# OpenAI-compatible chat completions on 127.0.0.1: answer n is a distinct kernel whose fake
# marker says it runs in 1.8 * 0.9^n ms (each faster than the last) and takes 0.3 s to evaluate.
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KERNEL = """#include <kevo/kernel.h>
// fake: MARKER
__global__ void scale(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i];
}
KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  scale<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                           (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""
lock = threading.Lock()
count = [0]

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send_json(200, {"object": "list", "data": [{"id": "m1", "object": "model"}]})

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self.path.endswith("/chat/completions"):
            return self.send_json(404, {"error": {"message": "no such path " + self.path}})
        with lock:
            n = count[0]
            count[0] += 1
        marker = "pass time_ms=%.4f wall_s=0.3" % (1.8 * 0.9 ** n)
        content = ("NAME: v%d\nTHOUGHT: idea number %d: unroll more\n\n```cuda\n%s```\n"
                   % (n, n, KERNEL.replace("MARKER", marker)))
        self.send_json(200, {
            "id": "chatcmpl-%d" % n, "object": "chat.completion", "created": int(time.time()),
            "model": req.get("model", "m1"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
        sys.stderr.write("answer %d: %s\n" % (n, marker))

srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(srv.server_address[1]))
srv.serve_forever()
PY
python3 "$T/model.py" "$T/model.port" 2>"$T/logs/model.log" &
MODEL_PID=$!
wait_for 15 test -s "$T/model.port" || die "the model server did not start: $(cat "$T/logs/model.log")"
MODEL_PORT=$(cat "$T/model.port")
probe=$(python3 - "$MODEL_PORT" <<'PY'
import json, sys, urllib.request
r = urllib.request.Request("http://127.0.0.1:%s/v1/models" % sys.argv[1])
print(json.load(urllib.request.urlopen(r, timeout=5))["data"][0]["id"])
PY
)
[[ $probe == m1 ]] || die "the model server did not answer GET /v1/models"
log "model on http://127.0.0.1:$MODEL_PORT/v1 (model m1)"
step_done "loopback model"

# --- infra only: a trivial array through the same scheduler ---------------------------------
if [[ $INFRA_ONLY -eq 1 ]]; then
  cat >"$T/trivial.sbatch" <<'EOF'
#!/bin/bash
#SBATCH --gres=gpu:1
#SBATCH --signal=B:TERM@60
echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID on $(hostname) gres=${SLURM_JOB_GPUS:-none}"
sleep 2
EOF
  ARRAY=$(sbatch --parsable --array=0-2 --output="$T/logs/trivial-%A_%a.out" --chdir="$T" "$T/trivial.sbatch") ||
    die "sbatch failed"
  log "submitted array $ARRAY"
  # shellcheck disable=SC2317  # called through wait_for
  queue_empty() { [[ -z $(squeue -h -j "$ARRAY" 2>/dev/null) ]]; }
  wait_for 60 queue_empty || die "the trivial array did not drain: $(squeue)"
  states=$(scontrol show job "$ARRAY" 2>/dev/null | grep -o 'JobState=[A-Z]*' | sort | uniq -c | tr -s ' ')
  log "array $ARRAY: $states"
  n=$(scontrol show job "$ARRAY" | grep -c 'JobState=COMPLETED')
  [[ $n -eq 3 ]] || fail "expected 3 COMPLETED tasks, got $n"
  cat "$T"/logs/trivial-*.out
  step_done "trivial array of 3"
  exit 0
fi

# --- the task ---------------------------------------------------------------------------------
cat >"$T/task/task.toml" <<'EOF'
name = "vec_scale"
category = "elementwise"
description = "y[i] = 2 * x[i] for a vector x of N floats."
dims = ["N"]
flops = "N"
bytes = "8*N"

[[inputs]]
name = "x"
dtype = "f32"
shape = ["N"]

[[outputs]]
name = "y"
dtype = "f32"
shape = ["N"]

[[configs]]
name = "main"
dims = { N = 1048576 }
main = true

[[configs]]
name = "ragged"
dims = { N = 1001 }

[[configs]]
name = "tiny"
dims = { N = 33 }

[[configs]]
name = "secret_holdout"
dims = { N = 987653 }
held_out = true
EOF
sed -n '/^KERNEL = """/,/^"""/p' "$T/model.py" | sed '1s/^KERNEL = """//;$d' |
  sed 's|// fake: MARKER|// fake: pass time_ms=2.0|' >"$T/task/baseline.cu"
echo '#include <kevo/reference.h>' >"$T/task/reference.cpp"
grep -q 'fake: pass time_ms=2.0' "$T/task/baseline.cu" || die "could not write the baseline"
export KEVO_CACHE_DIR="$T/cache"  # the coordinator's LLM cache and the workers' rebuilt tasks
step_done "task"

# --- workers: worker.sbatch as an array of 3 --------------------------------------------------
ARRAY=$(KEVO_DB="$DB" KEVO_BIN="$KEVO" KEVO_IDLE_EXIT=$IDLE_EXIT KEVO_WORKER_ARGS="--fake-gpu" \
  sbatch --parsable --array="0-$((WORKERS - 1))" --output="$T/logs/worker-%A_%a.out" --chdir="$T" \
  "$SLURM_DIR/worker.sbatch") || die "sbatch worker.sbatch failed"
ARRAY=${ARRAY%%;*}
log "submitted worker array $ARRAY ($WORKERS tasks, --gres=gpu:1 each)"
all_running() { [[ $(squeue -h -j "$ARRAY" -t RUNNING -r 2>/dev/null | wc -l) -eq $WORKERS ]]; }
wait_for 60 all_running || fail "not all $WORKERS array tasks started: $(squeue -r -j "$ARRAY" 2>&1)"
log "array tasks running: $(squeue -h -r -j "$ARRAY" -o '%i:%T' | tr '\n' ' ')"
step_done "worker array submitted, running"

# --- the coordinator, here --------------------------------------------------------------------
log "coordinator: kevo evolve --fake-gpu --gpus none --budget-candidates $CANDIDATES"
coord_t=$(date +%s.%N)
timeout -s INT -k 30 "$COORD_TIMEOUT" "$KEVO" evolve "$T/task" --db "$DB" --fake-gpu --gpus none --model "http://127.0.0.1:$MODEL_PORT/v1#m1" \
  --llm live --budget-candidates "$CANDIDATES" --seed 7 >"$T/logs/coordinator.out" 2>"$T/logs/coordinator.err"
coord_rc=$?
coord_s=$(elapsed "$coord_t")
echo "--- coordinator stdout (exit $coord_rc, ${coord_s}s)"
cat "$T/logs/coordinator.out"
echo "--- coordinator stderr (last 8 lines)"
tail -8 "$T/logs/coordinator.err"
step_done "coordinator (kevo evolve)"

RUN=$(sed -n 's/^run \([0-9][0-9]*\) .*/\1/p' "$T/logs/coordinator.out" | head -1)
[[ $coord_rc -eq 0 || $coord_rc -eq 1 ]] || fail "kevo evolve exited $coord_rc$( ((coord_rc == 124 || coord_rc == 130)) && echo " (stopped after ${COORD_TIMEOUT}s)")"
[[ -n $RUN ]] || fail "no 'run N' line in the coordinator's output"
grep -q "^candidates $CANDIDATES " "$T/logs/coordinator.out" || fail "the run did not report $CANDIDATES candidates"
if [[ -n $RUN ]]; then
  status=$(psql_q "SELECT status FROM runs WHERE id=$RUN")
  ncand=$(psql_q "SELECT count(*) FROM candidates WHERE run_id=$RUN")
  echo "--- database: run $RUN status=$status, $ncand candidate rows"
  echo "jobs by state:"; psql_q "SELECT state, count(*) FROM jobs WHERE run_id=$RUN GROUP BY state ORDER BY 1" | sed 's/^/  /'
  echo "done jobs by worker:"; psql_q "SELECT worker, count(*) FROM jobs WHERE run_id=$RUN AND state='done' GROUP BY worker ORDER BY 1" | sed 's/^/  /'
  [[ $status == finished ]] || fail "run $RUN has status '$status', not finished"
  [[ $ncand -eq $CANDIDATES ]] || fail "run $RUN has $ncand candidate rows, not $CANDIDATES"
  left=$(psql_q "SELECT count(*) FROM jobs WHERE run_id=$RUN AND state NOT IN ('done')")
  [[ $left -eq 0 ]] || fail "$left job(s) of run $RUN are not done"
  nworkers=$(psql_q "SELECT count(DISTINCT worker) FROM jobs WHERE run_id=$RUN AND state='done'")
  [[ $nworkers -ge 2 ]] || fail "only $nworkers worker(s) took jobs (expected the $WORKERS array tasks to share them)"
fi

# --- the array drains: idle workers exit after $IDLE_EXIT s ------------------------------------
log "waiting for the array to drain (--idle-exit $IDLE_EXIT)"
queue_empty() { [[ -z $(squeue -h -r -j "$ARRAY" 2>/dev/null) ]]; }
wait_for $((IDLE_EXIT + 60)) queue_empty || fail "the array did not drain: $(squeue -r -j "$ARRAY" 2>&1)"
step_done "array drained"
echo "--- array $ARRAY after the run (scontrol)"
check_completed "$ARRAY" "$WORKERS" "worker array"
echo "--- worker logs (first and last line each)"
for f in "$T"/logs/worker-*.out; do echo "  $(basename "$f"): $(head -1 "$f")"; echo "  $(basename "$f"): $(tail -1 "$f")"; done
doc=$("$KEVO" doctor --db "$DB" 2>&1 | grep -A1 'run database')
echo "--- kevo doctor --db (its run database line)"; echo "$doc"
[[ $doc == *"run database   ok"* ]] || fail "kevo doctor --db did not find the run database usable"
step_done "phase 1 checks, kevo doctor"

# --- phase 2: campaign.sh submits coordinator.sbatch and a dependent worker array ------------
mkdir -p "$T/campaign"
log "phase 2: scripts/slurm/campaign.sh 2 (coordinator.sbatch + worker.sbatch --dependency=after)"
camp=$(cd "$T/campaign" && KEVO_DB="$DB" KEVO_BIN="$KEVO" KEVO_TASK="$T/task" \
  KEVO_MODEL="http://127.0.0.1:$MODEL_PORT/v1#m1" KEVO_IDLE_EXIT=$IDLE_EXIT KEVO_WORKER_ARGS="--fake-gpu" \
  KEVO_EVOLVE_ARGS="--fake-gpu --llm live --budget-candidates $CAMPAIGN_CANDIDATES --seed 8 --parallel 2 --queue-slots 4" \
  "$SLURM_DIR/campaign.sh" 2 2>&1) || fail "campaign.sh failed: $camp"
printf '  %s\n' "${camp//$'\n'/$'\n'  }"
COORD=$(echo "$camp" | sed -n 's/^coordinator=\([0-9]*\) workers=.*/\1/p')
ARRAY2=$(echo "$camp" | sed -n 's/^coordinator=[0-9]* workers=\([0-9]*\)$/\1/p')
if [[ -n $COORD && -n $ARRAY2 ]]; then
  dep=$(scontrol -o show job "$ARRAY2" 2>/dev/null | grep -o 'Dependency=[^ ]*' | head -1)
  log "worker array $ARRAY2: $dep"
  [[ $dep == *"after:$COORD"* || $dep == "Dependency=(null)" ]] || fail "worker array $ARRAY2 has $dep, not after:$COORD"
  # shellcheck disable=SC2317  # called through wait_for
  both_done() { [[ -z $(squeue -h -r -j "$COORD,$ARRAY2" 2>/dev/null) ]]; }
  wait_for $((COORD_TIMEOUT + IDLE_EXIT + 60)) both_done || fail "campaign jobs still queued: $(squeue -r 2>&1)"
  echo "--- coordinator job $COORD (kevo-coordinator-$COORD.out)"
  sed 's/^/  /' "$T/campaign/kevo-coordinator-$COORD.out" 2>/dev/null | grep -v ' done  valid ' | tail -12
  check_completed "$COORD" 1 "coordinator job"
  check_completed "$ARRAY2" 2 "campaign worker array"
  grep -q "^candidates $CAMPAIGN_CANDIDATES " "$T/campaign/kevo-coordinator-$COORD.out" ||
    fail "the campaign's coordinator did not report $CAMPAIGN_CANDIDATES candidates"
  RUN2=$(sed -n 's/^run \([0-9][0-9]*\) .*/\1/p' "$T/campaign/kevo-coordinator-$COORD.out" | head -1)
  if [[ -n $RUN2 ]]; then
    echo "--- database: run $RUN2 status=$(psql_q "SELECT status FROM runs WHERE id=$RUN2"), done jobs by worker:"
    psql_q "SELECT worker, count(*) FROM jobs WHERE run_id=$RUN2 AND state='done' GROUP BY worker ORDER BY 1" | sed 's/^/  /'
  fi
  for f in "$T"/campaign/kevo-worker-*.out; do echo "  $(basename "$f"): $(head -1 "$f")"; echo "  $(basename "$f"): $(tail -1 "$f")"; done
else
  fail "campaign.sh printed no 'coordinator=ID workers=ID' line"
fi
step_done "phase 2 (campaign.sh)"

# --- phase 3: SIGTERM reaches the worker (exec makes it the batch shell) -----------------------
# One worker with a 1-minute limit and --signal=B:TERM@20 (Slurm sends it 20 s before the limit,
# checking every 30 s or so), one stopped with scancel --batch --signal=TERM. Both must exit 0 on
# the signal (COMPLETED, not TIMEOUT or CANCELLED) and say so.
log "phase 3: --time=1 --signal=B:TERM@20, and scancel --batch --signal=TERM"
submit_one() {  # submit_one NAME SBATCH-OPTIONS...: one idle worker that never exits by itself
  local name=$1; shift
  local id
  id=$(KEVO_DB="$DB" KEVO_BIN="$KEVO" KEVO_IDLE_EXIT=3600 KEVO_WORKER_ARGS="--fake-gpu" \
    sbatch --parsable --array=0 --output="$T/logs/$name-%A_%a.out" --chdir="$T" "$@" "$SLURM_DIR/worker.sbatch") || return 1
  echo "${id%%;*}"
}
J_LIMIT=$(submit_one sig-limit --time=1 --signal=B:TERM@20) || fail "sbatch (time limit) failed"
J_CANCEL=$(submit_one sig-cancel) || fail "sbatch (scancel) failed"
# shellcheck disable=SC2317  # called through wait_for
worker_up() { grep -q 'takes jobs from' "$T"/logs/sig-cancel-"$J_CANCEL"_0.out 2>/dev/null; }
wait_for 60 worker_up || fail "the worker of job $J_CANCEL did not start"
scancel --batch --signal=TERM "$J_CANCEL" || fail "scancel --batch --signal=TERM $J_CANCEL failed"
# shellcheck disable=SC2317  # called through wait_for
sig_drained() { [[ -z $(squeue -h -r -j "$J_LIMIT,$J_CANCEL" 2>/dev/null) ]]; }
wait_for 120 sig_drained || fail "jobs $J_LIMIT, $J_CANCEL still queued: $(squeue -r 2>&1)"
check_completed "$J_LIMIT" 1 "worker with --signal=B:TERM@20"
check_completed "$J_CANCEL" 1 "worker stopped by scancel --batch --signal=TERM"
for f in "$T"/logs/sig-limit-*.out "$T"/logs/sig-cancel-*.out; do
  echo "  $(basename "$f"): $(tail -1 "$f")"
  grep -q '(stopped by a signal)' "$f" || fail "$(basename "$f") does not say the worker stopped by a signal"
done
lim=$(scontrol -o show job "$J_LIMIT" 2>/dev/null | sed -E 's/.*StartTime=([^ ]+) EndTime=([^ ]+).*/\1 \2/')
if [[ -n $lim ]]; then
  read -r st en <<<"$lim"
  log "time-limit worker ran $(($(date -d "$en" +%s) - $(date -d "$st" +%s))) s of its 60 s limit (TERM sent 20 s before it, at the latest)"
fi
step_done "phase 3 (SIGTERM)"
log "model answered $(grep -c '^answer' "$T/logs/model.log") request(s)"
