#!/usr/bin/env bash
# CPU Δ-stepping on 16 threads on the generated USA-size graph, beside GAPBS.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib
b=$PWD/.bundle/bin; w=/tmp/w; mkdir -p $w $OUT/b
t0=$SECONDS
[[ -f $w/usa.gr ]] || $b/ssspd-gen road --nodes 23947347 --seed 1 --out $w/usa --threads 16 --quiet
$b/ssspd-cli snapshot $w/usa.gr $w/usa.snap > /dev/null 2>&1
echo "gen+snap $((SECONDS - t0)) s"
ids=$(awk -v n=23947347 'BEGIN { srand(20261123); for (i = 0; i < 5; i++) printf "%s%d", (i ? " " : ""), 1 + int(rand() * n) }')
t0=$SECONDS
PEERS=gapbs GAPBS_THREADS=16 GAPBS_TRIALS=5 PEERS_CACHE=$w/pc timeout 400 .peers/tools/peers-run $w/usa.gr $ids 2>/dev/null | grep peer= | tee $OUT/b/peers.txt | awk '{print $4, $5}' | tr '\n' ' '; echo " <- gapbs usa ($((SECONDS - t0)) s)"
for sh in 64 0; do
  t0=$SECONDS
  rm -rf $w/pb; SS_CPU_DELTA_SHARE=$sh timeout 200 $b/ssspd-bench --graph usa=$w/usa.snap --source-ids ${ids// /,} --algorithms cpu-delta --threads 16 --out $w/pb > $w/pb.log 2>&1
  grep "cpu-delta:\|source" $w/pb.log | sed "s/^/share=$sh /"; echo "($((SECONDS - t0)) s)"
  cp $w/pb/results.csv $OUT/b/results-$sh.csv
done
