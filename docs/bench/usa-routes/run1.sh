#!/usr/bin/env bash
# run 1: the GPU suite beside the USA-size prepare, then GPU routes and the daemon on it
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $W $OUT
c=$W/cont-road-23947347
T0=$SECONDS
$b/ssspd-gen road --nodes 23947347 --seed 1 --out $c --snapshot $c.snap --threads 16 --quiet
( t0=$SECONDS; timeout 240 $b/ssspd-cli prepare $c.snap $c-cch.snap > $W/prep.log 2>&1; echo "prepare rc=$? $((SECONDS - t0)) s" >> $OUT/c1.txt ) &
pp=$!
timeout 330 $b/test-gpu > $OUT/test-gpu.txt 2>&1
wait $pp
SS_GPU_PHAST_ROUTE_PROFILE=1 timeout 150 $b/gpu-throughput $c-cch.snap --algorithm gpu-cch --streams 1,4 --batch 1,256 --queries 3000 --sources 32 > $OUT/thr.txt 2>&1
OUT=$OUT/gc SS_GPU_STAGES=continent SS_GPU_CONT_GRAPH=road SS_GPU_CONT_PARTS=daemon SS_GPU_CONT_RUNS="auto:256 gpu:64 gpu:256" SS_GPU_DAEMON_SECONDS=12 timeout $((570 - (SECONDS - T0))) scripts/gpu-check > $OUT/gc.txt 2>&1
