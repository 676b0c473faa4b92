#!/usr/bin/env bash
# run 2: GPU tests and NY routes (a round of 8 or 16 edges ahead) beside the USA-size
# prepare; USA routes (new, 8 ahead, the previous build); startup old/new alternating;
# the peers stage on the same graph and sources.
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib SS_DATA_DIR=$PWD/.gpudata
b=$PWD/.bundle/bin; W=/tmp/ssspd-gpu-check; mkdir -p $W $OUT
c=$W/cont-road-23947347
S=$OUT/r2.txt
T0=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } | tee $S
( t0=$SECONDS; $b/ssspd-gen road --nodes 23947347 --seed 1 --out $c --snapshot $c.snap --threads 16 --quiet
  timeout 280 $b/ssspd-cli prepare $c.snap $c-cch.snap > $W/prep.log 2>&1; echo "prepare rc=$? $((SECONDS - t0)) s" >> $S ) &
pp=$!
for cs in routes trees split; do
  t0=$SECONDS
  CK_RUN_CASE=$cs timeout 200 $b/test-gpu > $W/tg-$cs.txt 2>&1; echo "test-gpu $cs rc=$? $((SECONDS - t0)) s" >> $S
  grep -hE "^[0-9]+%|:F:|:E:|skipped" $W/tg-$cs.txt | tail -4 >> $S
done
t0=$SECONDS
timeout 100 $b/test-server-gpu $b/ssspd $b/ssspd-gen > $W/tsg.txt 2>&1; echo "test-server-gpu rc=$? $((SECONDS - t0)) s" >> $S
grep -E "^[0-9]+%|auto routes answered|:F:|:E:" $W/tsg.txt | tail -4 >> $S
ny=$SS_DATA_DIR/dimacs/USA-road-d.NY.gr.gz
for r in 1 2; do for a in 8 16; do
  SS_GPU_PHAST_ROUTE_AHEAD=$a timeout 100 $b/gpu-throughput $ny --algorithm gpu-cch --streams 1 --batch 1,256 --queries 3000 --sources 32 > $W/ny-$a-$r.txt 2>&1
  echo "NY ahead=$a round $r rc=$?:" >> $S; grep -o 'batch=[0-9]* qps=.*failures=[0-9]*' $W/ny-$a-$r.txt >> $S
done; done
echo "at $((SECONDS - T0)) s (prepare running beside the NY rows)" >> $S
wait $pp
grep -E "wrote|rror" $W/prep.log >> $S
echo "at $((SECONDS - T0)) s" >> $S
[[ -f $c-cch.snap ]] || { cat $S; exit 0; }
thr() { # label binary env batch queries
  local f=$W/thr-$1.txt
  env $3 SS_GPU_PHAST_ROUTE_PROFILE=1 timeout 150 $2 $c-cch.snap --algorithm gpu-cch --streams 1 --batch $4 --queries $5 --sources 16 > $f 2>&1
  echo "$1 rc=$?: $(grep -o 'qps=.*failures=[0-9]*' $f)" >> $S
  grep 'route profile' $f | awk '{for(i=1;i<=NF;i++){if($i=="chains")c+=$(i+1); if($i=="tiles")t+=$(i+1); if($i=="relaxations")r+=$(i+1); if($i=="meeting")m+=$(i+1)} n++} END {if(n) printf "   profile %d calls: chains %.0f us, tiles %.0f, relax %.0f, meeting %.0f\n", n, c/n, t/n, r/n, m/n}' >> $S
}
thr new-1 $b/gpu-throughput "X=1" 1 300
thr a8 $b/gpu-throughput "SS_GPU_PHAST_ROUTE_AHEAD=8" 1 300
thr old $b/gpu-throughput-old "X=1" 1 300
thr new-2 $b/gpu-throughput "X=1" 1 300
thr new-256 $b/gpu-throughput "X=1" 256 1024
echo "at $((SECONDS - T0)) s" >> $S
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
  grep -E "snapshot\]|\[cch\]|CCH ready|landmarks in|sweep of|first run|routes timed|route chains|measured in|loaded " $W/start-$1.log | cut -c12-400 >> $S
}
start old-1 $b/ssspd-old $c-cch.snap
start new-1 $b/ssspd $c-cch.snap
start old-2 $b/ssspd-old $c-cch.snap
start new-2 $b/ssspd $c-cch.snap
echo "at $((SECONDS - T0)) s" >> $S
if [[ $((SECONDS - T0)) -lt 420 ]]; then
  OUT=$OUT/gc SS_GPU_STAGES=continent SS_GPU_CONT_GRAPH=road SS_GPU_CONT_PARTS=peers timeout $((585 - (SECONDS - T0))) scripts/gpu-check > $W/gc.txt 2>&1
  echo "gpu-check peers rc=$? at $((SECONDS - T0)) s" >> $S
  grep -E "peers|continent" $W/gc.txt | tail -6 >> $S
  grep -hE "^peer=|^check" $OUT/gc/continent.txt 2>/dev/null | head -20 >> $S
fi
cat $S
tail -45 $OUT/gc/continent.txt 2>/dev/null
