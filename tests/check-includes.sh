#!/usr/bin/env bash
# check-includes.sh - the include graph points one way: down.
#
# Reads every #include "commsim/X.h" and every local #include "foo.h" in
# include/commsim/*.h and sim/**/*.[ch] and checks that
#  (1) the public headers include/commsim/*.h include one another without
#      a cycle;
#  (2) a header or source file includes only headers of its own level or
#      lower (LEVELS and FILE_LEVELS below);
#  (3) the codec (sim/codec/*.[ch]) uses nothing of the engine layer but
#      the random streams and time: of the level-0 headers it reaches,
#      directly or through other headers, only those of CODEC_ENGINE_OK.
# Every offending edge is printed as file:line.  A file of sim/ or a
# public header that has no level fails the check too, so that a new file
# gets one.  tests/ may include anything.
#
# Exit status: 0 pass, 1 a violation (or a stale ALLOW entry), 2 the
# script cannot run.  Run by `make check`; alone: tests/check-includes.sh
# (from the source tree, or with top_srcdir set).
set -u -o pipefail
shopt -s nullglob

# ---------------------------------------------------------------------------
# The levels, lowest first: a file may include headers of its level or
# lower.  Edit here.
#
#  level  public headers (include/commsim/NAME.h)
LEVELS='
   0     time error units yamltree csv plot rng engine ring arena
   1     codec topology routing loss
   2     net cc netstats
   3     fabric
   4     collective closed_form
   5     workload model convergence zoo
   6     scenario params
   7     sim sweep
'
# The engine layer, for (3): every header of level 0.  A codec may use
# these of it:
CODEC_ENGINE_OK='rng time'

# The files under sim/: the level of the headers they implement.  First
# matching pattern wins (bash patterns: * matches / too).  "cli" files
# (the command line) may include anything and nothing else may include
# them.
FILE_LEVELS='
   sim/cli/*                    cli
   sim/engine/*                 0
   sim/io/units.c               0
   sim/io/yamltree.c            0
   sim/io/csv.c                 0
   sim/io/plot.c                0
   sim/io/error.c               0
   sim/codec/*                  1
   sim/net/topology.c           1
   sim/net/topo/*               1
   sim/net/routing.c            1
   sim/net/loss.c               1
   sim/net/fabric*.c            3
   sim/net/*                    2
   sim/collective/*             4
   sim/workload/*               5
   sim/io/scenario.c            6
   sim/io/params.c              6
   sim/io/world.c               6
   sim/run/*                    7
'

# Headers that are no part of the graph: config.h is written by configure.
IGNORED='config.h'

# Known violations, allowed until they are mended: one per line,
# "FILE -> INCLUDED-HEADER" (the header as FILE's #include spells it; for
# (3), the include through which the codec file reaches the engine), each
# with a comment above it saying why and until when.  For example:
#   # sweep.c still writes the summary row itself (until run/ has it)
#   sim/io/sweep.c -> commsim/foo.h  An entry that no
# longer matches a violation fails the check, so that it is removed.
# (None today.)
ALLOW='
'
# ---------------------------------------------------------------------------

top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || { echo "check-includes.sh: cannot enter $top" >&2; exit 2; }
if [ ! -d include/commsim ] || [ ! -d sim ]; then
  echo "check-includes.sh: $top is not commsim's source tree" >&2
  exit 2
fi

declare -A level=()    # key: a file's path (include/commsim/X.h or sim/...) -> its level
declare -A allowed=()  # "file -> spelled" -> 0 (unused) / 1 (used)
fail=0
bad() { echo "$*"; fail=1; }

# a level as a number: cli above everything
rank() { if [ "$1" = cli ]; then echo 99; else echo "$1"; fi; }

while read -r lv names; do
  [ -n "$lv" ] || continue
  for n in $names; do level[include/commsim/$n.h]=$lv; done
done <<<"$LEVELS"

while read -r line; do
  line=${line%%#*}
  read -r -a w <<<"$line"   # one space between words
  [ ${#w[@]} -gt 0 ] && allowed[${w[*]}]=0
done <<<"$ALLOW"

files=(include/commsim/*.h)
while IFS= read -r f; do files+=("$f"); done < <(find sim -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)

for f in "${files[@]}"; do
  case $f in
  include/commsim/*)
    [ -n "${level[$f]:-}" ] || bad "$f: a public header without a level: add it to LEVELS in tests/check-includes.sh"
    ;;
  *)
    lv=
    while read -r pat l; do
      [ -n "$pat" ] || continue
      # shellcheck disable=SC2053
      if [[ $f == $pat ]]; then lv=$l; break; fi
    done <<<"$FILE_LEVELS"
    if [ -n "$lv" ]; then level[$f]=$lv
    else bad "$f: a file without a level: add it to FILE_LEVELS in tests/check-includes.sh"; fi
    ;;
  esac
done

# The edges: "FROM LINE TO SPELLED" (TO: the included file's path).
declare -a edges=()
for f in "${files[@]}"; do
  while IFS=: read -r ln spelled; do
    case " $IGNORED " in *" $spelled "*) continue ;; esac
    to=
    case $spelled in
    commsim/*) to=include/$spelled ;;
    *)
      to=$(realpath -m --relative-to=. "$(dirname "$f")/$spelled")
      [ -f "$to" ] || to=
      ;;
    esac
    if [ -z "$to" ] || [ ! -f "$to" ]; then
      bad "$f:$ln: includes \"$spelled\", which is no file of include/ or beside $f"
      continue
    fi
    edges+=("$f $ln $to $spelled")
  done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*("[^"]+"|<commsim/[^>]+>)' "$f" |
           sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]+)[">].*/\1:\2/')
done

# A violation, unless allowed.
violation() { # FILE LINE SPELLED MESSAGE
  local key="$1 -> $3"
  if [ -n "${allowed[$key]+x}" ]; then allowed[$key]=1; return; fi
  bad "$1:$2: $4"
}

# (2) no upward edge
declare -A deps=()   # public header -> the public headers it includes
declare -A out=()    # any file -> "line:to:spelled" of its includes, for (3)
for e in "${edges[@]}"; do
  read -r from ln to spelled <<<"$e"
  out[$from]+="$ln:$to:$spelled "
  [[ $from == include/commsim/* && $to == include/commsim/* ]] && deps[$from]+="$to "
  lf=${level[$from]:-} lt=${level[$to]:-}
  if [ -z "$lf" ] || [ -z "$lt" ]; then continue; fi   # reported above
  [ "$lf" = cli ] && continue
  if [ "$(rank "$lt")" -gt "$(rank "$lf")" ]; then
    violation "$from" "$ln" "$spelled" "upward include: $from (level $lf) includes $spelled (level $lt)"
  fi
done

# (1) no cycle among the public headers: a depth-first search; a header
# met again while on the stack closes a cycle.
declare -A color=()  # "" unvisited, 1 on the stack, 2 done
stack=()
reported_cycles=' '
dfs() {
  local h=$1 d
  color[$h]=1
  stack+=("$h")
  for d in ${deps[$h]:-}; do
    if [ "${color[$d]:-}" = 1 ]; then
      local cyc='' i on=0
      for i in "${stack[@]}"; do
        [ "$i" = "$d" ] && on=1
        [ $on = 1 ] && cyc+="${i#include/} -> "
      done
      cyc+=${d#include/}
      local ln
      ln=$(grep -n -E "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]${d#include/}[\">]" "$h" | head -1 | cut -d: -f1)
      local key
      key=$(echo "$cyc" | tr -d ' ' | tr '>' '\n' | sed 's/-$//' | LC_ALL=C sort -u | tr '\n' ' ')
      case $reported_cycles in *"|$key|"*) ;; *)
        reported_cycles+="|$key|"
        violation "$h" "$ln" "${d#include/}" "include cycle among the public headers: $cyc" ;;
      esac
    elif [ -z "${color[$d]:-}" ]; then
      dfs "$d"
    fi
  done
  unset 'stack[${#stack[@]}-1]'
  color[$h]=2
}
for h in include/commsim/*.h; do [ -z "${color[$h]:-}" ] && dfs "$h"; done

# (3) the codec and the engine layer: everything a codec file reaches,
# with the chain that reaches it.
declare -A okengine=()
for n in $CODEC_ENGINE_OK; do okengine[include/commsim/$n.h]=1; done
for f in "${files[@]}"; do
  [[ $f == sim/codec/* ]] || continue
  declare -A seen=()
  # a breadth-first walk: entries "file|chain|first-line|first-spelled"
  queue=()
  for x in ${out[$f]:-}; do
    IFS=: read -r ln to spelled <<<"$x"
    queue+=("$to|${to#include/}|$ln|$spelled")
  done
  while [ ${#queue[@]} -gt 0 ]; do
    IFS='|' read -r cur chain ln first <<<"${queue[0]}"
    queue=("${queue[@]:1}")
    [ -n "${seen[$cur]:-}" ] && continue
    seen[$cur]=1
    if [[ $cur == include/commsim/* && ${level[$cur]:-} = 0 && -z ${okengine[$cur]:-} ]]; then
      violation "$f" "$ln" "$first" "the codec reaches ${cur#include/} of the engine layer (only: $CODEC_ENGINE_OK): $f -> $chain"
    fi
    for x in ${out[$cur]:-}; do
      IFS=: read -r _ to _ <<<"$x"
      queue+=("$to|$chain -> ${to#include/}|$ln|$first")
    done
  done
  unset seen
done

for k in "${!allowed[@]}"; do
  [ "${allowed[$k]}" = 1 ] || bad "tests/check-includes.sh: the ALLOW entry '$k' matches no violation any more: remove it"
done

if [ $fail = 0 ]; then
  echo "check-includes.sh: ${#files[@]} files, ${#edges[@]} includes: the graph points down"
  exit 0
fi
exit 1
