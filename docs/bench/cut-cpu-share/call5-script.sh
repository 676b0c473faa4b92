#!/usr/bin/env bash
# CPU Δ-stepping, 16 threads: one-to-all on 32-bit (WIDE=0) against 64-bit (WIDE=1) distances.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib
b=$PWD/.bundle/bin; w=/tmp/w; mkdir -p $w
$b/ssspd-gen road --nodes 1070376 --seed 1 --out $w/r1m --quiet
$b/ssspd-gen road --nodes 4000000 --seed 1 --out $w/r4m --quiet
$b/ssspd-gen road --nodes 23947347 --seed 1 --out $w/usa --threads 16 --quiet
$b/ssspd-cli snapshot $w/usa.gr $w/usa.snap > /dev/null 2>&1
for g in .gpudata/dimacs/USA-road-d.NY.gr.gz:8 $w/r1m.gr:8 $w/r4m.gr:5 $w/usa.snap:3; do
  for wd in 1 0 1 0; do echo "== $(basename ${g%:*}) wide=$wd"; SS_CPU_DELTA_WIDE=$wd $b/time-cpu-delta ${g%:*} ${g#*:} 16 m8 2>&1 | grep "^delta\|mism"; done
done
