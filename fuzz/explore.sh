#!/bin/sh
# Open-ended fuzzing (docs/robustness.md): each harness of fuzz/harnesses
# (or those named) for SECONDS (default 600) with a random seed, from a
# corpus that grows from run to run in $WORK/corpus/NAME (outside the
# checkout), plus the seeds and saved reproducers.  Run it before a change
# to a reader or an analysis is submitted; save what it finds, minimized,
# as fuzz/regressions/NAME/<defect> so that fuzz/run.sh and ctest replay
# it from then on.  Fails on the same findings as fuzz/run.sh, with the
# stricter 10 s limit per input.
#
# usage: fuzz/explore.sh [SECONDS [HARNESS...]]   (env: see fuzz/common.sh)
set -eu
cd "$(dirname "$0")/.."
. fuzz/common.sh
seconds="${1:-600}"
[ $# -gt 0 ] && shift
only="$*"

fuzz_build
fuzz_seeds

status=0
while read -r name runs dictionary; do
  case " ${only:-$name} " in *" $name "*) ;; *) continue ;; esac
  fuzzer="$build/fuzz/fuzz_$name"
  corpus="$work/corpus/$name"
  artifacts="$work/artifacts/$name"
  log="$work/$name-explore.log"
  mkdir -p "$corpus" "$artifacts" "$work/seeds/$name"
  regressions=""
  if [ -d "fuzz/regressions/$name" ]; then regressions="fuzz/regressions/$name"; fi
  if "$fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
       $(fuzz_dict_option "$dictionary") -print_final_stats=1 -artifact_prefix="$artifacts/" \
       "$corpus" "$work/seeds/$name" $regressions >"$log" 2>&1; then
    executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$name: $executed executions in $seconds s, no finding;" \
         "corpus $(ls "$corpus" | wc -l) inputs"
  else
    echo "fuzz_$name: FINDING (input saved in $artifacts/):"
    fuzz_finding "$log"
    echo "  minimize: $fuzzer -minimize_crash=1 -runs=10000 $artifacts/<file>;" \
         "then save it as fuzz/regressions/$name/<what-it-broke>"
    status=1
  fi
done <<HARNESSES
$(fuzz_harnesses)
HARNESSES
exit $status
