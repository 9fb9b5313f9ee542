#!/usr/bin/env bash
export OUT KEVO_LOGS=/tmp/kl; mkdir -p $KEVO_LOGS
export KEVO_SHARDS=4 KEVO_E2E_FILTER='EvalLatency.*'
( KEVO_PHASES="e2e bench kernels baselines devdata" timeout ${T:-570} scripts/gpu-check.sh .carry > $KEVO_LOGS/check.log 2>&1 )
tar czf $OUT/logs.tgz -C $KEVO_LOGS .
grep -E "EVAL_LATENCY|PASS|FAIL|phase|cached|cold|CV" $KEVO_LOGS/check.log | tail -60
