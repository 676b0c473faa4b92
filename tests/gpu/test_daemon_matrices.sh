#!/bin/bash
# The daemon's engine=gpu matrices on NY-d against the CPU Dijkstra, entry by
# entry: 100 x 100 matrices, which the engine splits into pieces of 25 rows on
# 4 streams (the batched Δ-stepping, algorithm=delta), and the same matrices
# from the CCH's sweep (engine=gpu alone picks gpu-cch). Before the barrier at
# the bucket change (kernels/batch.cu), batched searches that ran beside each
# other on several streams returned wrong pieces here, in about a third of
# these matrices, while the library's own tests passed.
#
#   tests/gpu/test_daemon_matrices.sh SSSPD [ROUNDS]
#
# Needs a GPU and NY-d with coordinates under $SS_DATA_DIR/dimacs (exits 77,
# skipped, without them); exits 1 on any differing entry or failed request.
set -u
ssspd=$1
rounds=${2:-12}
data=${SS_DATA_DIR:-tests/data}/dimacs
gr=$data/USA-road-d.NY.gr.gz
co=$data/USA-road-d.NY.co.gz
[[ -r $gr && -r $co ]] || { echo "SKIP: needs $gr and $co"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: needs curl"; exit 77; }
tmp=$(mktemp -d)
port=$((20000 + $$ % 20000))
"$ssspd" --graph "$gr" --coords "$co" --listen "127.0.0.1:$port" --gpu-streams 4 \
        --workers 8 >"$tmp/log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 240); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
        kill -0 $pid 2>/dev/null || { echo "FAIL: the daemon exited:"; tail -5 "$tmp/log"; exit 1; }
        sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "FAIL: the daemon never served"; exit 1; }

ids() { # SEED K: K random node ids of NY
        awk -v s="$1" -v k="$2" -v n=264346 'BEGIN {
                srand(s); for (i = 0; i < k; i++) printf "%s%d", (i ? "," : ""), 1 + int(rand() * n) }'
}
ask() { # BODY OUT
        curl -sf -X POST -H 'Content-Type: application/json' --data-binary "$1" \
                "http://127.0.0.1:$port/distances" >"$2"
}
# One entry a line: row, column, distance.
entries() {
        sed -n 's/.*"distances":\[\[\(.*\)\]\].*/\1/p' "$1" | sed 's/\],\[/\n/g' |
                awk -F, '{ for (i = 1; i <= NF; i++) print NR, i, $i }'
}

bad=0
for algo in delta gpu-cch; do
        want=$algo
        q='"engine": "gpu", "algorithm": "delta"'
        [[ $algo == gpu-cch ]] && q='"engine": "gpu"'
        for r in $(seq "$rounds"); do
                src=$(ids $((2 * r)) 100)
                dst=$(ids $((2 * r + 1)) 100)
                ask "{\"from\": [$src], \"to\": [$dst], $q}" "$tmp/g.json" ||
                        { echo "FAIL: $algo round $r: request failed"; exit 1; }
                if ! grep -q "\"engine\":\"gpu\",\"algorithm\":\"$want\"" "$tmp/g.json"; then
                        if grep -q '"engine":"cpu"' "$tmp/g.json"; then
                                echo "SKIP: the GPU does not serve: $(grep -m1 -i gpu "$tmp/log")"
                                exit 77
                        fi
                        echo "FAIL: $algo round $r: not answered by $want: $(head -c 200 "$tmp/g.json")"
                        exit 1
                fi
                ask "{\"from\": [$src], \"to\": [$dst], \"engine\": \"cpu\", \"algorithm\": \"dijkstra\"}" \
                        "$tmp/c.json" || { echo "FAIL: CPU reference request failed"; exit 1; }
                entries "$tmp/g.json" >"$tmp/g.txt"
                entries "$tmp/c.json" >"$tmp/c.txt"
                [[ $(wc -l <"$tmp/g.txt") == 10000 ]] || { echo "FAIL: $algo round $r: not 100 x 100"; exit 1; }
                n=$(paste -d' ' "$tmp/g.txt" "$tmp/c.txt" | awk '$3 != $6' | wc -l)
                if [[ $n != 0 ]]; then
                        echo "MISMATCH $algo round $r: $n entries differ, e.g. (row col gpu row col cpu):"
                        paste -d' ' "$tmp/g.txt" "$tmp/c.txt" | awk '$3 != $6' | head -3
                        bad=$((bad + n))
                fi
        done
done
if [[ $bad != 0 ]]; then
        echo "FAIL: $bad matrix entries differ from the CPU Dijkstra"
        exit 1
fi
echo "daemon matrices: $((2 * rounds)) matrices of 100 x 100 on 4 streams equal to the CPU Dijkstra"
