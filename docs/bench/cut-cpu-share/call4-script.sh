#!/usr/bin/env bash
# The cut on the 24M continent under the table: one source, cuts alternating.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib
b=$PWD/.bundle/bin; w=/tmp/w; mkdir -p $w
t0=$SECONDS
$b/ssspd-gen tile --graph .gpudata/dimacs/USA-road-d.NY.gr.gz --coords .gpudata/dimacs/USA-road-d.NY.co.gz --rows 7 --cols 13 --out $w/cont --snapshot $w/cont.snap --threads 16 --quiet
$b/ssspd-cli prepare $w/cont.snap $w/cont-cch.snap > /dev/null 2>&1 || echo "prepare failed"
echo "gen+prepare $((SECONDS - t0)) s"
for r in 1 2; do for c in 32768 8192 16384 4096; do
  SS_GPU_PHAST_CUT=$c timeout 100 $b/gpu-verify $w/cont-cch.snap --label cont --algorithms delta --sources 1 --repeat 1 --p2p 0 --cch 1 --batch-verify 1 2>&1 | grep "^CCHBATCH" | sed "s/^/cut=$c /"
done; done
