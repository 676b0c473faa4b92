#!/bin/sh
# scripts/fetch-dimacs without the network: the challenge's layout served
# from a local directory through file:// URLs (SS_DIMACS_URL). It downloads
# what was asked, keeps only whole gzip files, skips what is there, and
# refuses unknown names and options.
set -eu
src=$1
fetch="$src/scripts/fetch-dimacs"
tmp=$(mktemp -d /tmp/ssspd-fetch-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v curl >/dev/null || command -v wget >/dev/null || { echo "no curl or wget: skipped"; exit 77; }

mkdir -p "$tmp/site/USA-road-d" "$tmp/site/USA-road-t"
gzip -c "$src/tests/data/dimacs/samples/sample.gr" >"$tmp/site/USA-road-d/USA-road-d.NY.gr.gz"
gzip -c "$src/tests/data/dimacs/samples/sample.co" >"$tmp/site/USA-road-d/USA-road-d.NY.co.gz"
printf 'not gzip' >"$tmp/site/USA-road-t/USA-road-t.NY.gr.gz"
SS_DIMACS_URL="file://$tmp/site"
export SS_DIMACS_URL

sh "$fetch" --dir "$tmp/out" NY >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; fail "fetch NY"; }
cmp "$tmp/out/USA-road-d.NY.gr.gz" "$tmp/site/USA-road-d/USA-road-d.NY.gr.gz" || fail "gr differs"
cmp "$tmp/out/USA-road-d.NY.co.gz" "$tmp/site/USA-road-d/USA-road-d.NY.co.gz" || fail "co differs"
[ ! -e "$tmp/out/USA-road-t.NY.gr.gz" ] || fail "the time graph came without --time"
sh "$fetch" --dir "$tmp/out" NY 2>&1 | grep -q "there already" || fail "an existing file was fetched again"

rc=0
sh "$fetch" --dir "$tmp/out" --time-only NY >"$tmp/log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a file that is not gzip: exit $rc"
grep -q "not a whole gzip file" "$tmp/log" || fail "no reason given: $(cat "$tmp/log")"
[ ! -e "$tmp/out/USA-road-t.NY.gr.gz" ] && [ ! -e "$tmp/out/USA-road-t.NY.gr.gz.part" ] ||
        fail "a broken download was kept"

[ "$(sh "$fetch" --dry-run --time NY | wc -l)" = 3 ] || fail "--dry-run --time: not three URLs"
rc=0; sh "$fetch" XX >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an unknown graph: exit $rc"
rc=0; sh "$fetch" --bogus NY >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an unknown option: exit $rc"
sh "$fetch" --help | grep -q "usage: scripts/fetch-dimacs" || fail "--help"
echo "fetch-dimacs: ok"
