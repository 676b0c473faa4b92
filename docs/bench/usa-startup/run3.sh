#!/usr/bin/env bash
# run 3: the checks beside the USA-size prepare (which now stores the metric), then startup:
# the previous build on the snapshot without the metric, this build on it, this build on the one with it
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $W $OUT
c=$W/cont-road-23947347
T0=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } | tee $OUT/env.txt
if [[ ! -f $c-cch.snap ]]; then
  ( t0=$SECONDS; $b/ssspd-gen road --nodes 23947347 --seed 1 --out $c --snapshot $c.snap --threads 16 --quiet
    timeout 260 $b/ssspd-cli prepare $c.snap $c-cch.snap > $W/prep.log 2>&1; echo "prepare rc=$? $((SECONDS - t0)) s" >> $OUT/r3.txt ) &
  pp=$!
fi
t0=$SECONDS
( timeout 100 $b/test-server-gpu $b/ssspd $b/ssspd-gen > $OUT/test-server-gpu.txt 2>&1; echo "test-server-gpu rc=$? $((SECONDS - t0)) s" | tee -a $OUT/r3.txt )
grep -E "^[0-9]+%|Checks|auto routes answered|F:" $OUT/test-server-gpu.txt | tail -4 | tee -a $OUT/r3.txt
t0=$SECONDS
( CK_RUN_CASE=routes timeout 200 $b/test-gpu > $OUT/test-gpu-routes.txt 2>&1; echo "test-gpu routes rc=$? $((SECONDS - t0)) s" >> $OUT/r3.txt ) &
tr=$!
( CK_RUN_CASE=trees timeout 200 $b/test-gpu > $OUT/test-gpu-trees.txt 2>&1; echo "test-gpu trees rc=$? $((SECONDS - t0)) s" >> $OUT/r3.txt ) &
tt=$!
wait $tr $tt
grep -E "^[0-9]+%|Checks|:F:|:E:" $OUT/test-gpu-routes.txt $OUT/test-gpu-trees.txt | tail -6 | tee -a $OUT/r3.txt
[[ -n ${pp:-} ]] && wait $pp
grep -E "wrote|rror" $W/prep.log | tee -a $OUT/r3.txt
[[ -f $c-cch.snap ]] || exit 0
echo "at $((SECONDS - T0)) s" | tee -a $OUT/r3.txt
t0=$SECONDS; $b/ssspd-cli snapshot --no-metric $c-cch.snap $c-cch1.snap 2>&1 | grep wrote | tee -a $OUT/r3.txt; echo "no-metric copy $((SECONDS - t0)) s" | tee -a $OUT/r3.txt
ls -la $c-cch.snap $c-cch1.snap | tee -a $OUT/r3.txt
start() { # label binary snapshot
  local t0 t1 sp
  t0=$(date +%s%N)
  $2 --graph $3 --listen 127.0.0.1:18600 --log-level debug --access-log no --gpu-streams 4 > $OUT/start-$1.log 2>&1 &
  sp=$!
  for i in $(seq 1 1200); do
    if $b/curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:18600/health 2>/dev/null | grep -q 200; then break; fi; sleep 0.05
  done
  t1=$(date +%s%N); echo "startup $1: $(( (t1 - t0) / 1000000 )) ms to /health" | tee -a $OUT/r3.txt
  $b/curl -s "127.0.0.1:18600/route?from=1&to=23947347" | head -c 200 >> $OUT/route-$1.txt
  kill $sp; wait $sp
}
for r in 1 2; do
  [[ $((SECONDS - T0)) -lt 470 ]] || break
  start old-v1-$r $b/ssspd-old $c-cch1.snap
  start new-v1-$r $b/ssspd $c-cch1.snap
  start new-v2-$r $b/ssspd $c-cch.snap
done
echo "at $((SECONDS - T0)) s" | tee -a $OUT/r3.txt
