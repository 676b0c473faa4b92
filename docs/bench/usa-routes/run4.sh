#!/usr/bin/env bash
# run 4: the final build: test-server-gpu, test-gpu trees, trees at k = 64, the daemon
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $W $OUT
c=$W/cont-road-23947347
T0=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } | tee $OUT/env.txt
if [[ ! -f $c-cch.snap ]]; then
  $b/ssspd-gen road --nodes 23947347 --seed 1 --out $c --snapshot $c.snap --threads 16 --quiet
  ( t0=$SECONDS; timeout 220 $b/ssspd-cli prepare $c.snap $c-cch.snap > $W/prep.log 2>&1; echo "prepare rc=$? $((SECONDS - t0)) s" >> $OUT/c4.txt ) &
  pp=$!
fi
t0=$SECONDS
( timeout 100 $b/test-server-gpu $b/ssspd $b/ssspd-gen > $OUT/test-server-gpu.txt 2>&1; echo "test-server-gpu rc=$? $((SECONDS - t0)) s" | tee -a $OUT/c4.txt )
grep -E "^[0-9]+%|Checks|auto routes answered|F:" $OUT/test-server-gpu.txt | tail -4 | tee -a $OUT/c4.txt
t0=$SECONDS
CK_RUN_CASE=trees timeout 150 $b/test-gpu > $OUT/test-gpu-trees.txt 2>&1
echo "test-gpu trees rc=$? $((SECONDS - t0)) s" | tee -a $OUT/c4.txt
grep -E "^[0-9]+%|Checks" $OUT/test-gpu-trees.txt | tail -2 | tee -a $OUT/c4.txt
[[ -n ${pp:-} ]] && wait $pp
grep -E "wrote|rror" $W/prep.log | tee -a $OUT/c4.txt
[[ -f $c-cch.snap ]] || exit 0
echo "at $((SECONDS - T0)) s" | tee -a $OUT/c4.txt
timeout 80 $b/gpu-verify $c-cch.snap --label usa --algorithms delta --sources 1 --repeat 1 --p2p 0 --cch 64 --batch-verify 1 2>&1 | grep "^CCHBATCH" | tee -a $OUT/c4.txt
echo "at $((SECONDS - T0)) s" | tee -a $OUT/c4.txt
OUT=$OUT/gc SS_GPU_STAGES=continent SS_GPU_CONT_GRAPH=road SS_GPU_CONT_PARTS=daemon SS_GPU_CONT_RUNS="auto:64 auto:256 gpu:256" SS_GPU_DAEMON_SECONDS=12 timeout $((440 - (SECONDS - T0))) scripts/gpu-check > $OUT/gc.txt 2>&1
echo "gpu-check rc=$? at $((SECONDS - T0)) s" | tee -a $OUT/c4.txt
tail -7 $OUT/gc.txt | tee -a $OUT/c4.txt
grep -E "routes:|one-to-all, measured|calibration" $OUT/gc/ssspd-continent.log | tee -a $OUT/c4.txt
grep -o '"route":"[^"]*"' $OUT/gc/gpu-check.log | tail -1 | tee -a $OUT/c4.txt
