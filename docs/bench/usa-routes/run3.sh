#!/usr/bin/env bash
# run 3: batched trees against the pipe's width, then the peers on the same graph
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $OUT; c=$W/cont-road-23947347
ls $c-cch.snap || exit 3
T0=$SECONDS
for pk in "16 -" "64 -" "64 32" "64 64"; do
  set -- $pk
  if [[ $2 == - ]]; then unset SS_GPU_PHAST_PIPE; else export SS_GPU_PHAST_PIPE=$2; fi
  timeout 90 $b/gpu-verify $c-cch.snap --label usa --algorithms delta --sources 1 --repeat 1 --p2p 0 --cch $1 --batch-verify 1 2>&1 | grep "^CCHBATCH" | sed "s/^/pipe=$2 /" | tee -a $OUT/c3.txt
done
unset SS_GPU_PHAST_PIPE
echo "at $((SECONDS - T0)) s" | tee -a $OUT/c3.txt
OUT=$OUT/gc SS_GPU_STAGES=continent SS_GPU_CONT_GRAPH=road SS_GPU_CONT_PARTS=peers timeout $((570 - (SECONDS - T0))) scripts/gpu-check > $OUT/gc.txt 2>&1
echo "gpu-check rc=$? at $((SECONDS - T0)) s" | tee -a $OUT/c3.txt
tail -6 $OUT/gc.txt | tee -a $OUT/c3.txt
