#!/usr/bin/env bash
# The generated USA-size graph: prepare its CCH on 16 cores, then one GPU sweep (checked) and 16.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib
b=$PWD/.bundle/bin; w=/tmp/w; mkdir -p $w
t0=$SECONDS
$b/ssspd-gen road --nodes 23947347 --seed 1 --out $w/usa --threads 16 --quiet
echo "gen $((SECONDS - t0)) s" | tee $OUT/usa.txt
t0=$SECONDS
timeout 175 $b/ssspd-cli prepare $w/usa.gr $w/usa.co $w/usa-cch.snap > $w/prep.log 2>&1
echo "prepare rc=$? $((SECONDS - t0)) s" | tee -a $OUT/usa.txt; grep -E "wrote|rror" $w/prep.log | tee -a $OUT/usa.txt; grep "CCH order" $w/prep.log | tail -1 | tee -a $OUT/usa.txt
[[ -f $w/usa-cch.snap ]] || exit 0
for k in 1 16; do
  timeout 60 $b/gpu-verify $w/usa-cch.snap --label usa --algorithms delta --sources 1 --repeat 1 --p2p 0 --cch $k --batch-verify 1 2>&1 | grep "^CCHBATCH" | tee -a $OUT/usa.txt
done
