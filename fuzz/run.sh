#!/bin/sh
# The fuzz step of the README's test command and CI (docs/robustness.md):
# the same verdict for the same commit, whatever the machine's speed or
# history.  Builds the libFuzzer harnesses listed in fuzz/harnesses, makes
# the seed corpus from the real traces (fuzz/common.sh), then per harness,
# as many harnesses at a time as there are CPUs:
#   1. replays every saved reproducer (fuzz/regressions/NAME/) and every
#      seed once;
#   2. fuzzes from those with a fixed -seed for the harness's fixed number
#      of executions (RUNS in fuzz/harnesses), into a corpus folder emptied
#      first, so that nothing carries over from an earlier run and nothing
#      is written into the checkout.
# Fails on any crash, leak, out-of-memory, sanitizer report, violated
# invariant, or input slower than 30 s (a budget by executions, not time;
# the limit is loose so that a loaded machine's pauses are not findings);
# the offending input is saved under $WORK/artifacts/NAME.  Open-ended
# fuzzing, with random seeds and a corpus that grows, is fuzz/explore.sh.
#
# usage: fuzz/run.sh   (env: see fuzz/common.sh)
set -eu
cd "$(dirname "$0")/.."
. fuzz/common.sh
seed=1

fuzz_build
fuzz_seeds

# One harness: replay, then the fixed-seed run; prints its verdict line(s)
# and fails on a finding.
fuzz_one() {
  name=$1 runs=$2 dictionary=$3
  fuzzer="$build/fuzz/fuzz_$name"
  corpus="$work/fixed/$name"
  artifacts="$work/artifacts/$name"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts" "$work/seeds/$name"
  inputs=$(find "fuzz/regressions/$name" "$work/seeds/$name" -type f 2>/dev/null | sort)
  log="$work/$name-replay.log"
  if [ -n "$inputs" ] && ! "$fuzzer" $inputs >"$log" 2>&1; then
    echo "fuzz_$name: a saved reproducer or seed fails, see $log:"
    fuzz_finding "$log"
    return 1
  fi
  log="$work/$name.log"
  regressions=""
  if [ -d "fuzz/regressions/$name" ]; then regressions="fuzz/regressions/$name"; fi
  if "$fuzzer" -seed=$seed -runs="$runs" -max_len=65536 -rss_limit_mb=2048 -timeout=30 \
       $(fuzz_dict_option "$dictionary") -print_final_stats=1 -artifact_prefix="$artifacts/" \
       "$corpus" "$work/seeds/$name" $regressions >"$log" 2>&1; then
    echo "fuzz_$name: $(echo "$inputs" | grep -c .) inputs replayed, $runs executions" \
         "from seed $seed, no finding ($(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$log" | tail -n 1))"
  else
    echo "fuzz_$name: FINDING (input saved in $artifacts/):"
    fuzz_finding "$log"
    return 1
  fi
}

# A lane takes the next harness no lane has claimed (mkdir is atomic) until
# none is left; each harness is one single-threaded process, so one lane
# per CPU.  A harness's verdict does not depend on what runs beside it:
# its executions are counted, not timed.
claims="$work/claims"
fuzz_lane() {
  while read -r name runs dictionary; do
    mkdir "$claims/$name" 2>/dev/null || continue
    if fuzz_one "$name" "$runs" "$dictionary" >"$claims/$name/verdict"; then
      : >"$claims/$name/passed"
    fi
  done <<HARNESSES
$(fuzz_harnesses)
HARNESSES
}

rm -rf "$claims"
mkdir -p "$claims"
lanes=$(nproc)
while [ "$lanes" -gt 0 ]; do
  fuzz_lane &
  lanes=$((lanes - 1))
done
wait

# Verdicts in the order of fuzz/harnesses.
status=0
for name in $(fuzz_harnesses | cut -d' ' -f1); do
  cat "$claims/$name/verdict"
  [ -e "$claims/$name/passed" ] || status=1
done
exit $status
