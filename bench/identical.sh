#!/usr/bin/env bash
# Behaviour unchanged: every example under topologies/ gives byte-identical
# files with --reproducible from this tree's sim/commsim and from another
# commit's (a refactoring's proof).
#
# Usage: bench/identical.sh REV [--set KEY=VALUE]...
#   REV is built once in a worktree under /tmp (kept for the next call).
#   Extra arguments go to every run of both (e.g. --set workload.iterations=2).
# Exit status 0 when every file of every example is the same, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/identical.sh REV [--set KEY=VALUE]..." >&2; exit 2; }
rev=$(git rev-parse --short "$1")
shift
ref=/tmp/commsim-ref-$rev
if [ ! -x "$ref/sim/commsim" ]; then
  rm -rf "$ref"
  git worktree prune
  git worktree add -q --detach "$ref" "$rev"
  (cd "$ref" && autoreconf -fi >/dev/null 2>&1 && ./configure -q >/dev/null && make -s -j"$(nproc)" sim/commsim >/dev/null)
fi
[ -x sim/commsim ] || { echo "bench/identical.sh: build this tree first (make)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for f in topologies/*.yaml; do
  name=$(basename "$f" .yaml)
  traces='output.traces=[summary, iterations, messages, links, timeline]'
  "$ref/sim/commsim" run "$f" -q --reproducible -o "$out/ref/$name" --set "$traces" "$@" 2>"$out/ref-$name.err" || true
  sim/commsim run "$f" -q --reproducible -o "$out/new/$name" --set "$traces" "$@" 2>"$out/new-$name.err" || true
  if [ ! -e "$out/ref/$name" ] && [ ! -e "$out/new/$name" ] && cmp -s "$out/ref-$name.err" "$out/new-$name.err"; then
    printf '%-28s identical (refused alike, no files)\n' "$name" # (a fidelity that cannot run it)
  elif diff -r -q "$out/ref/$name" "$out/new/$name" >"$out/diff" 2>&1 && cmp -s "$out/ref-$name.err" "$out/new-$name.err"; then
    printf '%-28s identical (%s files)\n' "$name" "$(ls "$out/new/$name" | wc -l)"
  else
    printf '%-28s DIFFERS\n' "$name"
    sed 's/^/    /' "$out/diff"
    cmp -s "$out/ref-$name.err" "$out/new-$name.err" || { diff "$out/ref-$name.err" "$out/new-$name.err" | sed 's/^/    stderr: /' || true; }
    status=1
  fi
done
[ $status = 0 ] && echo "every example identical to $rev" || echo "some examples differ from $rev"
exit $status
