#!/bin/sh
# run.sh SECONDS - run each libFuzzer harness for SECONDS (from a build
# configured with --enable-fuzzing; called by `make fuzz-run`).
# The growing corpus is kept in fuzz-corpus/<target>/ of the build folder,
# crashes, leaks and hangs in fuzz-artifacts/; each run prints libFuzzer's
# final statistics.  FUZZ_FLAGS adds libFuzzer flags (for long runs:
# -fork=1 -ignore_crashes=1 keeps going after a finding).  Exits non-zero when a harness found anything.
set -u
seconds=${1:-60}
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
status=0
mkdir -p fuzz-artifacts
for target in scenario units; do
  corpus=fuzz-corpus/$target
  mkdir -p "$corpus"
  case $target in
  scenario) seeds="$src/topologies $src/tests/scenarios/bad $src/tests/fuzz/regress/scenario"
            extra="-dict=$src/tests/fuzz/scenario.dict -max_len=8192" ;;
  units)    seeds="$src/tests/fuzz/seeds/units $src/tests/fuzz/regress/units"
            extra="-max_len=64" ;;
  esac
  echo "fuzz: $target for ${seconds} s" >&2
  # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: a blow-up
  ./tests/fuzz/fuzz_$target $extra ${FUZZ_FLAGS:-} -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix=fuzz-artifacts/$target- "$corpus" $seeds \
    > "fuzz-$target.log" 2>&1 || status=1
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' "fuzz-$target.log" | tail -4 >&2
  grep -E 'ERROR|SUMMARY|crash-|leak-|timeout-|oom-' "fuzz-$target.log" | head -5 >&2
done
[ $status = 0 ] && echo "fuzz: nothing found" >&2 || echo "fuzz: FOUND something: see fuzz-artifacts/ and fuzz-*.log" >&2
exit $status
