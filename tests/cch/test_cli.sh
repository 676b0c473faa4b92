#!/bin/sh
# ssspd-cli with the CCH, end to end on a generated road graph: prepare,
# then p2p, ss and route with --algorithm cch against Dijkstra; the
# metric left out of a snapshot and added back.
set -eu
cli=$1
gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$gen" road --nodes 3000 --seed 4 --out "$tmp/road" --quiet
awk 'BEGIN { srand(7); print "p aux sp p2p 200";
             for (i = 0; i < 200; i++) printf "q %d %d\n", 1 + int(rand() * 3000), 1 + int(rand() * 3000) }' \
        > "$tmp/q.p2p"
printf 'p aux sp ss 3\ns 1\ns 1500\ns 3000\n' > "$tmp/q.ss"

"$cli" prepare -q "$tmp/road.gr" "$tmp/road.co" "$tmp/road.snap" || fail "prepare"
"$cli" prepare "$tmp/road.gr" "$tmp/road.co" "$tmp/verbose.snap" 2>"$tmp/err" || fail "prepare"
grep -q "CCH of [0-9]* edges" "$tmp/err" || fail "prepare message: $(cat "$tmp/err")"
grep -q "customized for its weights" "$tmp/err" || fail "prepare message: $(cat "$tmp/err")"

want=$("$cli" p2p -q "$tmp/road.gr" "$tmp/q.p2p")
echo "$want" > "$tmp/want.p2p"
for graph in "$tmp/road.snap" "$tmp/road.gr"; do
        got=$("$cli" p2p -q --algorithm cch "$graph" "$tmp/q.p2p")
        [ "$got" = "$want" ] || fail "p2p with cch on $graph differs from dijkstra"
done
want=$("$cli" ss -q "$tmp/road.gr" "$tmp/q.ss")
got=$("$cli" ss -q --algorithm cch "$tmp/road.snap" "$tmp/q.ss")
[ "$got" = "$want" ] || fail "ss with cch: $got, dijkstra: $want"

# routes: the same distance; the path may be another of the same length
want=$("$cli" route -q "$tmp/road.gr" 17 2950 | head -1)
got=$("$cli" route -q --algorithm cch "$tmp/road.snap" 17 2950)
[ "$(echo "$got" | head -1)" = "$want" ] || fail "route distance: $got"
echo "$got" | sed -n 2p | grep -q "^path 17 .* 2950$" || fail "route path: $got"

# a prepared snapshot prepares again; a missing graph is an error
"$cli" prepare -q "$tmp/road.snap" "$tmp/again.snap" || fail "prepare from a snapshot"
cmp -s "$tmp/road.snap" "$tmp/again.snap" || fail "preparing twice gave another snapshot"
# the metric: left out with --no-metric (a smaller file, still exact),
# and added back by snapshot, byte for byte the prepared file
"$cli" snapshot --no-metric "$tmp/road.snap" "$tmp/bare.snap" 2>"$tmp/err" || fail "snapshot --no-metric"
grep -q "the CCH without its metric" "$tmp/err" || fail "snapshot message: $(cat "$tmp/err")"
[ "$(wc -c <"$tmp/bare.snap")" -lt "$(wc -c <"$tmp/road.snap")" ] || fail "--no-metric kept the metric"
got=$("$cli" p2p -q --algorithm cch "$tmp/bare.snap" "$tmp/q.p2p")
[ "$got" = "$(cat "$tmp/want.p2p")" ] || fail "p2p with cch on the snapshot without its metric"
"$cli" snapshot "$tmp/bare.snap" "$tmp/full.snap" 2>"$tmp/err" || fail "snapshot"
grep -q "the CCH, customized now" "$tmp/err" || fail "snapshot message: $(cat "$tmp/err")"
cmp -s "$tmp/road.snap" "$tmp/full.snap" || fail "the metric added back differs from prepare's"
"$cli" prepare -q --no-metric "$tmp/road.snap" "$tmp/bare2.snap" || fail "prepare --no-metric"
cmp -s "$tmp/bare.snap" "$tmp/bare2.snap" || fail "prepare --no-metric differs from snapshot --no-metric"

if "$cli" prepare -q "$tmp/missing.gr" "$tmp/x.snap" 2>"$tmp/err"; then fail "missing graph"; fi
grep -q "missing.gr" "$tmp/err" || fail "missing-graph message: $(cat "$tmp/err")"
"$cli" prepare --help | grep -q "usage: ssspd-cli prepare" || fail "prepare --help"
echo "cli with cch: all checks passed"
