#!/bin/sh
# Bounded fuzzing (docs/robustness.md, CI runs it after the tests): builds
# the libFuzzer harnesses with clang (HTA_FUZZ=ON), replays every saved
# reproducer in fuzz/regressions/, makes the seed corpus from the real
# traces (fuzz/make_corpus.sh for the Kineto reader and the analyses,
# fuzz/make_input_corpus.py for the Nsight SQLite, CUPTI CSV and rocprofv3
# readers, hta-tracegen --flight-recorder's dumps in every encoding for fr_dump)
# and runs each harness for SECONDS (default 60).  Fails on any crash, leak, slow input (> 10 s), out-of-memory or
# sanitizer report; the offending input is saved under $WORK/artifacts.
#
# usage: fuzz/run.sh [SECONDS]
# env:   HTA_FUZZ_BUILD (build-fuzz), HTA_FUZZ_WORK (build-fuzz/work),
#        HTA_TRACES (../shared/traces beside the checkout)
set -eu
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build="${HTA_FUZZ_BUILD:-build-fuzz}"
work="${HTA_FUZZ_WORK:-build-fuzz/work}"
traces="${HTA_TRACES:-$(pwd)/../shared/traces}"

CC=clang cmake -S . -B "$build" -DHTA_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
targets="reader analyses nsys_sqlite cupti_csv rocprof_json fr_dump rocpd"
cmake --build "$build" -j "$(nproc)" --target hta-tracegen \
  $(for t in $targets; do echo --target fuzz_$t; done) >/dev/null
fuzz/make_corpus.sh "$traces/hta" "$work/seeds"
/usr/bin/python3 fuzz/make_input_corpus.py "$traces" "$work/seeds"
mkdir -p "$work/seeds/fr_dump"
for encoding in torch pickle2 pickle4 pickle5 json; do
  "$build/hta-tracegen" --flight-recorder --ring 10 --encoding $encoding -o "$work/fr_$encoding"
  cp "$work/fr_$encoding/nccl_trace_rank_0" "$work/seeds/fr_dump/$encoding"
done

status=0
for target in $targets; do
  fuzzer="$build/fuzz/fuzz_$target"
  corpus="$work/corpus/$target"     # grows from run to run; new inputs land here
  artifacts="$work/artifacts/$target"
  log="$work/$target.log"
  mkdir -p "$corpus" "$artifacts"
  mkdir -p fuzz/regressions/$target
  regressions=$(find fuzz/regressions/$target -type f | sort)
  dict=""
  case $target in reader|analyses) dict=-dict=fuzz/kineto.dict ;; esac
  if [ -n "$regressions" ] && ! "$fuzzer" $regressions >"$work/$target-regressions.log" 2>&1; then
    echo "fuzz_$target: a saved reproducer fails again, see $work/$target-regressions.log"
    status=1
  fi
  if "$fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
       $dict -print_final_stats=1 -artifact_prefix="$artifacts/" \
       "$corpus" "$work/seeds/$target" fuzz/regressions/$target >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$target: $runs executions in $seconds s, no finding"
  else
    echo "fuzz_$target: FINDING (input saved in $artifacts/):"
    grep -E 'ERROR|runtime error|SUMMARY|invariant|Test unit written' "$log" | head -n 8
    status=1
  fi
done
exit $status
