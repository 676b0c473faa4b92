#!/bin/sh
# ssspd-cli apsp end to end: the matrix against p2p and route, the file
# written and queried, the method and block options, and the errors.
set -eu
cli=$1
src=${SS_DATA_DIR:-tests/data}/dimacs
[ -r "$src/samples/sample.gr" ] || { echo "FAIL: $src/samples/sample.gr is not readable"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
s=$src/samples

for m in fw sssp; do
        out=$("$cli" apsp -q --cpu --method $m --pairs "$s/sample.p2p" "$s/sample.gr")
        [ "$out" = "$(printf 'd 3\nd -\nd 1')" ] || fail "$m pairs: $out"
        out=$("$cli" apsp -q --cpu --method $m --paths --route 1 6 "$s/sample.gr")
        [ "$out" = "$(printf 'distance 6\npath 1 2 4 6')" ] || fail "$m route: $out"
done
out=$("$cli" apsp -q --cpu --method fw --block 16 --paths --route 5 1 "$s/sample.gr")
[ "$out" = "$(printf 'distance -\npath -')" ] || fail "no-route output: $out"

# The matrix file: written once, then queried without the graph.
"$cli" apsp -q --cpu --paths --out "$tmp/m.apsp" "$s/sample.gr" || fail "--out"
out=$("$cli" apsp -q --pairs "$s/sample.p2p" --route 1 6 "$tmp/m.apsp")
[ "$out" = "$(printf 'd 3\nd -\nd 1\ndistance 6\npath 1 2 4 6')" ] || fail "from file: $out"

# rome99: the matrix answers what p2p answers.
[ -r "$src/rome99.gr" ] || fail "$src/rome99.gr is not readable"
awk 'BEGIN { srand(7); print "p aux sp p2p 200";
             for (i = 0; i < 200; i++) printf "q %d %d\n", 1 + int(rand() * 3353), 1 + int(rand() * 3353) }' \
        > "$tmp/r.p2p"
want=$("$cli" p2p -q "$src/rome99.gr" "$tmp/r.p2p")
got=$("$cli" apsp -q --cpu --pairs "$tmp/r.p2p" "$src/rome99.gr")
[ "$got" = "$want" ] || fail "rome99 pairs differ from p2p"
got=$("$cli" apsp -q --cpu --method fw --threads 2 --pairs "$tmp/r.p2p" "$src/rome99.gr")
[ "$got" = "$want" ] || fail "rome99 fw pairs differ from p2p"
"$cli" apsp --cpu "$src/rome99.gr" 2>"$tmp/err" >/dev/null || fail "rome99 report"
grep -q "apsp: 3353 nodes, sssp on the cpu" "$tmp/err" || fail "report: $(cat "$tmp/err")"

# errors: a message naming the sizes, the option or the file
if "$cli" apsp -q --cpu --method fw --paths --memory-limit 1K "$s/sample.gr" 2>"$tmp/err"; then
        fail "memory limit ignored"
fi
grep -q "the matrix of 6 nodes needs" "$tmp/err" || fail "limit message: $(cat "$tmp/err")"
grep -q "the memory limit is 1.0 kB" "$tmp/err" || fail "limit message: $(cat "$tmp/err")"
if "$cli" apsp -q --method dijkstra "$s/sample.gr" 2>"$tmp/err"; then fail "bad method accepted"; fi
grep -q "method 'dijkstra' is not auto, fw or sssp" "$tmp/err" || fail "method message"
if "$cli" apsp -q --cpu --block 48 "$s/sample.gr" 2>"$tmp/err"; then fail "block 48 accepted"; fi
grep -q "block 48" "$tmp/err" || fail "block message: $(cat "$tmp/err")"
if "$cli" apsp -q --cpu --route 1 6 "$s/sample.gr" 2>"$tmp/err"; then fail "--route without --paths"; fi
grep -q "needs --paths" "$tmp/err" || fail "route message"
if "$cli" apsp -q --memory-limit 12Q "$s/sample.gr" 2>"$tmp/err"; then fail "bad size accepted"; fi
if "$cli" p2p -q --paths "$s/sample.gr" "$s/sample.p2p" 2>"$tmp/err"; then fail "--paths on p2p"; fi
grep -q "belongs to the apsp command" "$tmp/err" || fail "option message"
printf 'XSSPAPSP' > "$tmp/bad.apsp"
head -c 100 "$tmp/m.apsp" | tail -c 92 >> "$tmp/bad.apsp"
if "$cli" apsp -q --pairs "$s/sample.p2p" "$tmp/bad.apsp" 2>"$tmp/err"; then fail "bad file accepted"; fi
"$cli" apsp --help | grep -q "usage: ssspd-cli apsp" || fail "apsp --help"
echo "apsp cli: all checks passed"
