#!/usr/bin/env bash
# run 2: trees with slots of 2 trees (as before) and of half a batch, k = 64 and 128
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $OUT
c=$W/cont-road-23947347
T0=$SECONDS
[[ -f $c-cch.snap ]] || { echo "no CCH snapshot"; exit 1; }
for x in "2 64" "0 64" "0 128" "2 128"; do
  set -- $x
  [[ $((SECONDS - T0)) -lt 480 ]] || break
  if [[ $1 != 0 ]]; then export SS_GPU_PHAST_SLOT_TREES=$1; else unset SS_GPU_PHAST_SLOT_TREES; fi
  echo "slot=$1 k=$2" | tee -a $OUT/r2.txt
  timeout 150 $b/gpu-verify $c-cch.snap --label usa --algorithms delta --sources 1 --repeat 1 --p2p 0 --cch $2 --batch-verify 1 2>&1 | grep -E "^CCHBATCH|^CCHMATRIX|rror" | tee -a $OUT/r2.txt
  echo "at $((SECONDS - T0)) s" | tee -a $OUT/r2.txt
done
