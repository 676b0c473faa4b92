#!/bin/sh
# ssspd-cli end to end on the challenge's samples: outputs, snapshots, errors
# and exit codes.
set -eu
cli=$1
data=${SS_DATA_DIR:-tests/data}/dimacs/samples
[ -r "$data/sample.gr" ] || { echo "FAIL: $data/sample.gr is not readable"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$cli" ss -q "$data/sample.gr" "$data/sample.ss")
[ "$out" = "$(printf 'd 16\nd 7\nd 9')" ] || fail "ss output: $out"

out=$("$cli" p2p -q "$data/sample.gr" "$data/sample.p2p")
[ "$out" = "$(printf 'd 3\nd -\nd 1')" ] || fail "p2p output: $out"

out=$("$cli" route -q "$data/sample.gr" 1 6)
[ "$out" = "$(printf 'distance 6\npath 1 2 4 6')" ] || fail "route output: $out"

out=$("$cli" route -q --algorithm astar --coords "$data/sample.co" "$data/sample.gr" 1 6)
[ "$out" = "$(printf 'distance 6\npath 1 2 4 6')" ] || fail "astar route output: $out"

# the parallel CPU Δ-stepping, by its engine and by its solver name
for t in 1 2 3; do
        out=$("$cli" ss -q --algorithm delta --engine cpu --threads $t "$data/sample.gr" "$data/sample.ss")
        [ "$out" = "$(printf 'd 16\nd 7\nd 9')" ] || fail "cpu delta ss output ($t threads): $out"
        out=$("$cli" p2p -q -a delta -e cpu -t $t --delta 1 "$data/sample.gr" "$data/sample.p2p")
        [ "$out" = "$(printf 'd 3\nd -\nd 1')" ] || fail "cpu delta p2p output ($t threads): $out"
        out=$("$cli" route -q -a delta -e cpu -t $t "$data/sample.gr" 1 6)
        [ "$out" = "$(printf 'distance 6\npath 1 2 4 6')" ] || fail "cpu delta route ($t threads): $out"
done
out=$("$cli" route -q --algorithm delta --engine cpu "$data/sample.gr" 5 1)
[ "$out" = "$(printf 'distance -\npath -')" ] || fail "cpu delta no-route output: $out"
# options before the command
out=$("$cli" -q -a delta -e cpu -t 2 route "$data/sample.gr" 1 6)
[ "$out" = "$(printf 'distance 6\npath 1 2 4 6')" ] || fail "options before the command: $out"
"$cli" --version | grep -q '^ssspd-cli ' || fail "--version"
# auto runs on the CPU when there is no GPU (or the GPU when there is one)
out=$("$cli" route -q -a delta -e auto "$data/sample.gr" 1 6)
[ "$out" = "$(printf 'distance 6\npath 1 2 4 6')" ] || fail "auto delta route: $out"
if "$cli" route -q -a bf -e cpu "$data/sample.gr" 1 2 2>"$tmp/err"; then fail "bf on the CPU accepted"; fi
grep -q "'bf' has no CPU row" "$tmp/err" || fail "engine message: $(cat "$tmp/err")"
if "$cli" route -q -a delta -e tpu "$data/sample.gr" 1 2 2>"$tmp/err"; then fail "engine tpu accepted"; fi
grep -q "\-\-engine: 'tpu' is not cpu, gpu or auto" "$tmp/err" || fail "unknown engine message: $(cat "$tmp/err")"
if "$cli" route -q -a delta -e cpu -t many "$data/sample.gr" 1 2 2>"$tmp/err"; then fail "bad --threads accepted"; fi
grep -q "\-\-threads: 'many'" "$tmp/err" || fail "threads message: $(cat "$tmp/err")"

out=$("$cli" route -q "$data/sample.gr" 5 1)
[ "$out" = "$(printf 'distance -\npath -')" ] || fail "no-route output: $out"

"$cli" snapshot -q "$data/sample.gr" "$data/sample.co" "$tmp/s.snap" || fail "snapshot"
out=$("$cli" route -q "$tmp/s.snap" 1 6)
[ "$out" = "$(printf 'distance 6\npath 1 2 4 6')" ] || fail "route on snapshot: $out"

gzip -c "$data/sample.gr" > "$tmp/s.gr.gz"
out=$("$cli" ss -q "$tmp/s.gr.gz" "$data/sample.ss")
[ "$out" = "$(printf 'd 16\nd 7\nd 9')" ] || fail "ss on .gr.gz: $out"

# errors: non-zero exit and a message naming the cause
if "$cli" snapshot -q --coords "$data/sample.co" "$data/sample.gr" "$tmp/other.co" "$tmp/c.snap" \
        2>"$tmp/err"; then fail "two coordinate files accepted"; fi
grep -q "coordinates given twice" "$tmp/err" || fail "coords twice message: $(cat "$tmp/err")"
[ ! -e "$tmp/c.snap" ] || fail "snapshot written despite two coordinate files"
if "$cli" route -q "$data/sample.gr" 1 7 2>"$tmp/err"; then fail "node 7 accepted"; fi
grep -q "node '7'" "$tmp/err" || fail "node error message: $(cat "$tmp/err")"
if "$cli" route -q "$tmp/missing.gr" 1 2 2>"$tmp/err"; then fail "missing file accepted"; fi
grep -q "missing.gr" "$tmp/err" || fail "missing-file message: $(cat "$tmp/err")"
if "$cli" route --algorithm nosuch "$data/sample.gr" 1 2 2>"$tmp/err"; then fail "bad algorithm accepted"; fi
grep -q "unknown algorithm 'nosuch'" "$tmp/err" || fail "algorithm message"
if "$cli" frobnicate 2>/dev/null; then fail "unknown command accepted"; fi
"$cli" route --help | grep -q "usage: ssspd-cli route" || fail "route --help"
"$cli" --help | grep -q "snapshot" || fail "--help"
echo "cli: all checks passed"
