#!/usr/bin/env bash
# Submits a kevo campaign to Slurm: one coordinator (coordinator.sbatch, no GPU) and an array of
# WORKERS workers (worker.sbatch, one GPU each) that starts once the coordinator has started
# (--dependency=after), so no GPU waits while the coordinator is still queued. Workers exit by
# themselves KEVO_IDLE_EXIT seconds after the last job (docs/CLUSTER.md).
#
#   export KEVO_DB='postgresql://kevo@db.example:5432/kevo?sslmode=require'
#   export KEVO_MODEL=openai:gpt-4.1 OPENAI_API_KEY=...
#   scripts/slurm/campaign.sh 8 softmax                  # a new run of task softmax, 8 GPUs
#   KEVO_RESUME=12 scripts/slurm/campaign.sh 8           # continue run 12
#
# Environment: everything coordinator.sbatch and worker.sbatch read (KEVO_DB, KEVO_MODEL,
# KEVO_BIN, KEVO_EVOLVE_ARGS, KEVO_IDLE_EXIT, ...), and
#   SBATCH_COORDINATOR_ARGS, SBATCH_WORKER_ARGS  more sbatch options for each, split on spaces
#                     (e.g. "--partition=gpu --account=proj --time=08:00:00")
# Without KEVO_EVOLVE_ARGS the coordinator gets "--parallel WORKERS --queue-slots 2*WORKERS"
# (at least 16): enough LLM calls and queued jobs to keep every worker busy.
# Prints the two job ids; "coordinator=ID workers=ID" is the last line.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { echo "usage: $0 WORKERS [TASK]   (KEVO_DB must be set; KEVO_RESUME=RUN instead of TASK continues a run)" >&2; exit 2; }

[[ $# -ge 1 && $1 =~ ^[1-9][0-9]*$ ]] || usage
workers=$1
if [[ $# -ge 2 ]]; then export KEVO_TASK=$2; fi
: "${KEVO_DB:?set KEVO_DB to the run database (postgresql://USER@HOST:PORT/DB?sslmode=...)}"
if [[ -z ${KEVO_TASK:-} && -z ${KEVO_RESUME:-} ]]; then usage; fi
if [[ -z ${KEVO_EVOLVE_ARGS:-} ]]; then
  slots=$((2 * workers)); ((slots < 16)) && slots=16
  export KEVO_EVOLVE_ARGS="--parallel $workers --queue-slots $slots"
fi
command -v sbatch >/dev/null || { echo "$0: sbatch not found (run this on a Slurm login node)" >&2; exit 2; }

# shellcheck disable=SC2086  # the *_ARGS variables split on spaces on purpose
coord=$(sbatch --parsable ${SBATCH_COORDINATOR_ARGS:-} "$here/coordinator.sbatch")
coord=${coord%%;*}  # "ID;cluster" on a multi-cluster setup
what=${KEVO_RESUME:+resume run $KEVO_RESUME}; what=${what:-task $KEVO_TASK}
echo "coordinator: job $coord ($what)"

# shellcheck disable=SC2086
array=$(sbatch --parsable --array="0-$((workers - 1))" --dependency="after:$coord" ${SBATCH_WORKER_ARGS:-} \
  "$here/worker.sbatch")
array=${array%%;*}
echo "workers:     array job $array, $workers task(s), start after job $coord starts"
echo "watch:       squeue -j $coord,$array    logs: kevo-coordinator-$coord.out, kevo-worker-${array}_N.out"
echo "drain:       scancel --batch --signal=TERM $array   (each worker finishes its job, then exits)"
echo "coordinator=$coord workers=$array"
