#!/usr/bin/env bash
export OUT KEVO_LOGS=/tmp/kl; mkdir -p $KEVO_LOGS
export KEVO_SHARDS=4 KEVO_E2E_FILTER='EvalLatency.*'
( KEVO_PHASES="e2e baselines bench" timeout 420 scripts/gpu-check.sh .carry > $KEVO_LOGS/check.log 2>&1 )
export PATH=/usr/local/cuda/bin:$PATH KEVO_HOME=$PWD KEVO_BUILD=$PWD/.carry KEVO_CACHE_DIR=/tmp/kevo-cache KEVO_RUNNER=$PWD/.carry/bin/kevo-runner LD_LIBRARY_PATH=$PWD/.carry/lib
for e in 4; do
  LATENCIES=2 IN_FLIGHT=16 CANDIDATES=48 EVALS_PER_GPU=$e timeout 120 bench/throughput.sh .carry $KEVO_LOGS/tp$e > $KEVO_LOGS/tp$e.txt 2>&1
  grep THROUGHPUT $KEVO_LOGS/tp$e.txt | sed "s/^/E$e /" | cut -c1-200
done
tar czf $OUT/logs.tgz -C $KEVO_LOGS .
grep -hE "EVAL_LATENCY|EVAL_|MEDIAN_CV|FAILED|PASSED|BASELINE bias|BASELINE gelu " $KEVO_LOGS/*.txt | grep -v "listed below" | sort | uniq -c | cut -c1-250 | tail -40
