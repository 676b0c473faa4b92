#!/usr/bin/env bash
# run 5: the final build (the CPU rows timed after the sweep again, their backends made beside the
# GPU's timing; the later checks at a lower priority; the heights beside the lists' check).
# GPU tests beside the USA-size prepare; then startup alternating with cc9a186.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $W $OUT
c=$W/cont-road-23947347
S=$OUT/r5.txt
T0=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } | tee $S
( t0=$SECONDS; $b/ssspd-gen road --nodes 23947347 --seed 1 --out $c --snapshot $c.snap --threads 16 --quiet
  timeout 300 $b/ssspd-cli prepare $c.snap $c-cch.snap > $W/prep.log 2>&1; echo "prepare rc=$? $((SECONDS - t0)) s" >> $S ) &
pp=$!
t0=$SECONDS
timeout 100 $b/test-server-gpu $b/ssspd $b/ssspd-gen > $W/tsg.txt 2>&1; echo "test-server-gpu rc=$? $((SECONDS - t0)) s" >> $S
grep -E "^[0-9]+%|auto routes answered|:F:|:E:" $W/tsg.txt | tail -4 >> $S
t0=$SECONDS
timeout 150 $b/test-weights-gpu > $W/twg.txt 2>&1; echo "test-weights-gpu rc=$? $((SECONDS - t0)) s" >> $S
grep -hE "^[0-9]+%|:F:|:E:|skipped" $W/twg.txt | tail -4 >> $S
for cs in routes customize; do
  t0=$SECONDS
  CK_RUN_CASE=$cs timeout 180 $b/test-gpu > $W/tg-$cs.txt 2>&1; echo "test-gpu $cs rc=$? $((SECONDS - t0)) s" >> $S
  grep -hE "^[0-9]+%|:F:|:E:|skipped" $W/tg-$cs.txt | tail -4 >> $S
done
wait $pp
grep -E "wrote|rror" $W/prep.log >> $S
echo "at $((SECONDS - T0)) s" >> $S
[[ -f $c-cch.snap ]] || { cat $S; exit 0; }
start() { # label binary snapshot
  local t0 t1 sp
  [[ $((SECONDS - T0)) -gt 400 ]] && { echo "startup $1 not run: time" >> $S; return; }
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
  grep -E "snapshot\]|\[cch\]|CCH ready|landmarks in|landmark tables|checks left|sweep of|first run|routes timed|route chains|measured in|routes:|loaded " $W/start-$1.log | cut -c12-400 >> $S
}
start old-1 $b/ssspd-old $c-cch.snap
start new-1 $b/ssspd $c-cch.snap
start new-2 $b/ssspd $c-cch.snap
start old-2 $b/ssspd-old $c-cch.snap
start new-3 $b/ssspd $c-cch.snap
start new-4 $b/ssspd $c-cch.snap
start new-5 $b/ssspd $c-cch.snap
echo "at $((SECONDS - T0)) s" >> $S
cat $S
