#!/bin/sh
# ssspd-cli --algorithm with every GPU row (delta, bf, bf-ell, bf-queue,
# gpu-dijkstra, bf-edgelist) prints exactly what the CPU Dijkstra prints:
# checksums per source (ss), point-to-point distances (p2p) and routes whose
# distance matches. gpu-cch (the CCH sweep) joins the ss checks, alone and 8
# sources per sweep, and the p2p and route checks. Needs a GPU (exits 77,
# skipped, without one); NY's sources join in when the data folder has them.
set -eu
cli=$1
data=${SS_DATA_DIR:-tests/data}/dimacs
[ -r "$data/samples/sample.gr" ] || { echo "FAIL: $data/samples/sample.gr is not readable"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
gpu_rows="delta bf bf-ell bf-queue gpu-dijkstra bf-edgelist"

# Without a usable GPU the GPU solvers refuse with SS_ENOGPU's message: skip.
if ! "$cli" route -q -a delta "$data/samples/sample.gr" 1 2 >/dev/null 2>"$tmp/probe"; then
        if grep -qiE 'no CUDA|no usable|cooperative|driver' "$tmp/probe"; then
                echo "SKIP: $(cat "$tmp/probe")"
                exit 77
        fi
fi

# a .ss file over every node of cycle32 and the first 16 sources of NY
{ echo "p aux sp ss 32"; i=1; while [ $i -le 32 ]; do echo "s $i"; i=$((i + 1)); done; } >"$tmp/c32.ss"
set -- "$data/samples/sample.gr" "$data/samples/sample.ss" \
       "$data/samples/gapbs-4.gr" "$data/samples/sample.ss" \
       "$data/samples/cycle32.gr" "$tmp/c32.ss"
if [ -r "$data/USA-road-d.NY.gr.gz" ] && [ -r "$data/USA-road-d.NY.ss" ]; then
        { echo "p aux sp ss 16"; grep '^s ' "$data/USA-road-d.NY.ss" | head -16; } >"$tmp/ny.ss"
        set -- "$@" "$data/USA-road-d.NY.gr.gz" "$tmp/ny.ss"
fi
while [ $# -ge 2 ]; do
        "$cli" ss -q "$1" "$2" >"$tmp/want" || fail "dijkstra ss on $1"
        for a in $gpu_rows; do
                "$cli" ss -q -a $a "$1" "$2" >"$tmp/got" || fail "$a ss on $1"
                cmp -s "$tmp/want" "$tmp/got" || fail "$a checksums differ on $1"
        done
        # options before the command, and several sources per search
        "$cli" -q --algorithm delta --batch 8 ss "$1" "$2" >"$tmp/got" || fail "batched ss on $1"
        cmp -s "$tmp/want" "$tmp/got" || fail "batched delta checksums differ on $1"
        for k in 1 8; do
                "$cli" -q --algorithm gpu-cch --batch $k ss "$1" "$2" >"$tmp/got" ||
                        fail "gpu-cch ss (batch $k) on $1"
                cmp -s "$tmp/want" "$tmp/got" || fail "gpu-cch checksums (batch $k) differ on $1"
        done
        shift 2
done
"$cli" p2p -q "$data/samples/sample.gr" "$data/samples/sample.p2p" >"$tmp/want"
for a in $gpu_rows; do
        "$cli" p2p -q -a $a "$data/samples/sample.gr" "$data/samples/sample.p2p" >"$tmp/got"
        cmp -s "$tmp/want" "$tmp/got" || fail "$a p2p differs"
        out=$("$cli" route -q -a $a "$data/samples/sample.gr" 1 6 | head -1)
        [ "$out" = "distance 6" ] || fail "$a route: $out"
done
# gpu-cch: routes from the sweep, paths walked back on the device
"$cli" p2p -q -a gpu-cch "$data/samples/sample.gr" "$data/samples/sample.p2p" >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" || fail "gpu-cch p2p differs"
out=$("$cli" route -q -a gpu-cch "$data/samples/sample.gr" 1 6 | head -1)
[ "$out" = "distance 6" ] || fail "gpu-cch route: $out"
echo "gpu cli: all checks passed"
