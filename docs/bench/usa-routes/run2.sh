#!/usr/bin/env bash
# run 2: GPU tests (routes, customize, the daemon's) beside the USA-size prepare; the daemon on it under wrk
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $W $OUT
c=$W/cont-road-23947347
T0=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } | tee $OUT/env.txt
if [[ ! -f $c-cch.snap ]]; then
  $b/ssspd-gen road --nodes 23947347 --seed 1 --out $c --snapshot $c.snap --threads 16 --quiet
  echo "gen $((SECONDS - T0)) s" | tee -a $OUT/c2.txt
  ( t0=$SECONDS; timeout 280 $b/ssspd-cli prepare $c.snap $c-cch.snap > $W/prep.log 2>&1; echo "prepare rc=$? $((SECONDS - t0)) s" >> $OUT/c2.txt ) &
  pp=$!
fi
t0=$SECONDS
for cs in routes customize; do
  CK_RUN_CASE=$cs timeout 200 $b/test-gpu > $OUT/test-gpu-$cs.txt 2>&1
  echo "test-gpu $cs rc=$? $((SECONDS - t0)) s" | tee -a $OUT/c2.txt
  grep -E "^[0-9]+%|Checks" $OUT/test-gpu-$cs.txt | tail -2 | tee -a $OUT/c2.txt
done
t0=$SECONDS
( timeout 200 $b/test-server-gpu $b/ssspd $b/ssspd-gen > $OUT/test-server-gpu.txt 2>&1; echo "test-server-gpu rc=$? $((SECONDS - t0)) s" | tee -a $OUT/c2.txt )
grep -E "^[0-9]+%|Checks|auto routes answered" $OUT/test-server-gpu.txt | tail -3 | tee -a $OUT/c2.txt
[[ -n ${pp:-} ]] && wait $pp
grep -E "wrote|rror" $W/prep.log | tee -a $OUT/c2.txt
[[ -f $c-cch.snap ]] || exit 0
echo "at $((SECONDS - T0)) s" | tee -a $OUT/c2.txt
OUT=$OUT/gc SS_GPU_STAGES=continent SS_GPU_CONT_GRAPH=road SS_GPU_CONT_PARTS=daemon SS_GPU_CONT_RUNS="auto:64 auto:256 gpu:256" SS_GPU_DAEMON_SECONDS=12 timeout $((575 - (SECONDS - T0))) scripts/gpu-check > $OUT/gc.txt 2>&1
echo "gpu-check rc=$? at $((SECONDS - T0)) s" | tee -a $OUT/c2.txt
tail -8 $OUT/gc.txt | tee -a $OUT/c2.txt
grep -E "routes:|one-to-all, measured" $OUT/gc/ssspd-continent.log | tee -a $OUT/c2.txt
