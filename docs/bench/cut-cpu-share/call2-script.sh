#!/usr/bin/env bash
# CPU Δ-stepping on 16 threads: fusion sharing off/on, beside GAPBS, same sources.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib
b=$PWD/.bundle/bin; w=/tmp/w; mkdir -p $w $OUT/a
$b/ssspd-gen road --nodes 4000000 --seed 1 --out $w/r4m --quiet
ny=.gpudata/dimacs/USA-road-d.NY.gr.gz; nyt=.gpudata/dimacs/USA-road-t.NY.gr.gz
for g in $ny $w/r4m.gr; do
  for sh in 0 64 0 64; do echo "== $(basename $g) share=$sh"; SS_CPU_DELTA_SHARE=$sh $b/time-cpu-delta $g 8 16 m8,m16 2>&1 | grep "^delta\|mism"; done
done
side() { # label graph n
  ids=$(awk -v n="$3" 'BEGIN { srand(20261123); for (i = 0; i < 5; i++) printf "%s%d", (i ? " " : ""), 1 + int(rand() * n) }')
  PEERS=gapbs GAPBS_THREADS=16 PEERS_CACHE=$w/pc .peers/tools/peers-run $2 $ids 2>/dev/null | grep peer= | tee -a $OUT/a/peers.txt | awk '{print $4, $5}' | tr '\n' ' '; echo " <- gapbs $1"
  for sh in 0 64 0 64; do
    rm -rf $w/pb; SS_CPU_DELTA_SHARE=$sh $b/ssspd-bench --graph $1=$2 --source-ids ${ids// /,} --algorithms cpu-delta --threads 16 --out $w/pb > $w/pb.log 2>&1
    grep "cpu-delta:" $w/pb.log | sed "s/^/share=$sh /"
  done
}
side NY-d $ny 264346; side NY-t $nyt 264346; side r4m $w/r4m.gr 4000000
