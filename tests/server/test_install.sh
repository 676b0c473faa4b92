#!/bin/sh
# The installed layout and the step that puts a graph in place:
#   - `meson install` puts the binaries, the settings, the unit and the
#     manual pages under one prefix, and the unit starts the binary and
#     reads the settings installed beside it;
#   - the manual pages format without a warning, and ssspd.conf(5) and
#     config/ssspd.conf document every setting `ssspd --help` lists;
#   - ssspd-install-graph writes a snapshot the daemon's user can read, and
#     refuses bad arguments.
# Arguments: the build directory, the source directory.
set -eu
build=$1
src=$2
tmp=$(mktemp -d /tmp/ssspd-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR="$tmp/root" meson install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log" >&2; fail "meson install"; }
prefix=$(meson introspect "$build" --buildoptions |
        python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
root="$tmp/root$prefix"
unit=$(find "$tmp/root" -name ssspd.service)
[ -n "$unit" ] || fail "no unit installed"
case "$unit" in
"$root"/*) ;;
*) fail "the unit $unit is outside the prefix $prefix" ;;
esac
exe=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$unit")
conf=$(sed -n 's/^ExecStart=.* --config \([^ ]*\)$/\1/p' "$unit")
[ -x "$tmp/root$exe" ] || fail "ExecStart names $exe, which is not installed"
[ -r "$tmp/root$conf" ] || fail "ExecStart reads $conf, which is not installed"
[ -x "$root/sbin/ssspd-install-graph" ] || fail "ssspd-install-graph is not installed"
for page in man1/ssspd-cli.1 man1/ssspd-gen.1 man5/ssspd.conf.5 man8/ssspd.8 \
        man8/ssspd-install-graph.8; do
        [ -r "$root/share/man/$page" ] || fail "$page is not installed"
done
if command -v groff >/dev/null; then
        for page in "$src"/man/*.[0-9]; do
                out=$(groff -man -ww -z "$page" 2>&1)
                [ -z "$out" ] || fail "$page: $out"
        done
fi

# Every setting, documented in both places.
"$build/src/server/ssspd" --help | sed -n 's/^  --\([a-z-]*\) .*/\1/p' | tr - _ |
        grep -v '^config$\|^help$' >"$tmp/keys"
[ "$(wc -l <"$tmp/keys")" -gt 30 ] || fail "ssspd --help lists too few settings"
while read -r key; do
        grep -q "^\.B $key\$" "$src/man/ssspd.conf.5" || fail "ssspd.conf(5) lacks $key"
        grep -q "^$key " "$src/config/ssspd.conf" || fail "config/ssspd.conf lacks $key"
done <"$tmp/keys"

# ssspd-install-graph
PATH="$build/src/tools:$PATH"
export PATH
ig="$build/src/tools/ssspd-install-graph"
data="$src/tests/data/dimacs/samples"
sh "$ig" --state-dir "$tmp/state" --no-reload "$data/sample.gr" "$data/sample.co" >"$tmp/ig.log" 2>&1 ||
        { cat "$tmp/ig.log" >&2; fail "ssspd-install-graph"; }
[ "$(stat -c %a "$tmp/state/graph.snap")" = 644 ] || fail "graph.snap is not mode 0644"
ls -a "$tmp/state" | grep -q '^\.graph' && fail "a temporary file was left behind"
out=$(ssspd-cli --quiet route "$tmp/state/graph.snap" 1 6)
echo "$out" | grep -q "^distance 6$" || fail "route on the installed snapshot: $out"
sh "$ig" --state-dir "$tmp/state" --no-reload --no-cch "$data/sample.gr" >/dev/null 2>&1 ||
        fail "ssspd-install-graph --no-cch"
rc=0; sh "$ig" --bogus x >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an unknown option exits $rc, not 2"
rc=0; sh "$ig" --state-dir "$tmp/state" --no-reload /nonexistent.gr >"$tmp/err" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q nonexistent "$tmp/err" || fail "a missing graph exits $rc: $(cat "$tmp/err")"
echo "install layout, manual pages and ssspd-install-graph: ok"
