#!/usr/bin/env bash
# run 4: the final build. Checks beside the USA-size prepare; startup of the previous
# build (c37e8ed) on the snapshot without the metric, this build on both; trees at
# k = 256 from the stored metric, checked against Dijkstra.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $W $OUT
c=$W/cont-road-23947347
S=$OUT/r4.txt
T0=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } | tee $S
if [[ ! -f $c-cch.snap ]]; then
  ( t0=$SECONDS; $b/ssspd-gen road --nodes 23947347 --seed 1 --out $c --snapshot $c.snap --threads 16 --quiet
    timeout 260 $b/ssspd-cli prepare $c.snap $c-cch.snap > $W/prep.log 2>&1; echo "prepare rc=$? $((SECONDS - t0)) s" >> $S ) &
  pp=$!
fi
t0=$SECONDS
( timeout 100 $b/test-server-gpu $b/ssspd $b/ssspd-gen > $W/tsg.txt 2>&1; echo "test-server-gpu rc=$? $((SECONDS - t0)) s" >> $S )
grep -E "^[0-9]+%|Checks|auto routes answered|:F:|:E:" $W/tsg.txt | tail -4 >> $S
t0=$SECONDS
( CK_RUN_CASE=routes timeout 200 $b/test-gpu > $W/tgr.txt 2>&1; echo "test-gpu routes rc=$? $((SECONDS - t0)) s" >> $S ) &
tr=$!
( CK_RUN_CASE=trees timeout 200 $b/test-gpu > $W/tgt.txt 2>&1; echo "test-gpu trees rc=$? $((SECONDS - t0)) s" >> $S ) &
tt=$!
wait $tr $tt
grep -hE "^[0-9]+%|:F:|:E:" $W/tgr.txt $W/tgt.txt | tail -6 >> $S
[[ -n ${pp:-} ]] && wait $pp
grep -E "wrote|rror" $W/prep.log >> $S
echo "at $((SECONDS - T0)) s" >> $S
[[ -f $c-cch.snap ]] || { cat $S; exit 0; }
t0=$SECONDS; $b/ssspd-cli snapshot -q --no-metric $c-cch.snap $c-cch1.snap; echo "no-metric copy rc=$? $((SECONDS - t0)) s" >> $S
ls -la $c-cch.snap $c-cch1.snap >> $S
start() { # label binary snapshot
  local t0 t1 sp
  t0=$(date +%s%N)
  $2 --graph $3 --listen 127.0.0.1:18600 --log-level debug --access-log no --gpu-streams 4 > $W/start-$1.log 2>&1 &
  sp=$!
  for i in $(seq 1 1200); do
    if $b/curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:18600/health 2>/dev/null | grep -q 200; then break; fi; sleep 0.05
  done
  t1=$(date +%s%N); echo "startup $1: $(( (t1 - t0) / 1000000 )) ms to /health" >> $S
  echo "$1 route: $($b/curl -s "127.0.0.1:18600/route?from=1&to=23947347" | grep -o '"distance":[0-9]*')" >> $S
  echo "$1 gpu memory: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)" >> $S
  kill $sp; wait $sp
  grep -E "snapshot\]|CCH ready|sweep of|first run|routes timed|measured in|loaded " $W/start-$1.log | cut -c12-400 >> $S
}
start old-v1 $b/ssspd-old $c-cch1.snap
start new-v2-1 $b/ssspd $c-cch.snap
start new-v1 $b/ssspd $c-cch1.snap
start new-v2-2 $b/ssspd $c-cch.snap
echo "at $((SECONDS - T0)) s" >> $S
if [[ $((SECONDS - T0)) -lt 380 ]]; then
  timeout $((540 - (SECONDS - T0))) $b/gpu-verify $c-cch.snap --label usa --algorithms delta --sources 1 --repeat 1 --p2p 0 --cch 256 --batch-verify 1 2>&1 | grep -E "^CCHBATCH|^CCHMATRIX|rror" >> $S
  echo "gpu-verify at $((SECONDS - T0)) s" >> $S
fi
cat $S
