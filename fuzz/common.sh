# fuzz/common.sh: what fuzz/run.sh and fuzz/explore.sh share, sourced from
# the checkout's top: the harness list, the build, the seed corpus.
# env: HTA_FUZZ_BUILD (build-fuzz), HTA_FUZZ_WORK (build-fuzz/work),
#      HTA_TRACES (../shared/traces beside the checkout)
build="${HTA_FUZZ_BUILD:-build-fuzz}"
work="${HTA_FUZZ_WORK:-build-fuzz/work}"
traces="${HTA_TRACES:-$(pwd)/../shared/traces}"

# The lines of fuzz/harnesses: NAME RUNS [DICTIONARY].
fuzz_harnesses() {
  grep '^[a-z]' fuzz/harnesses
}

# Builds every harness with clang, ASan and UBSan (HTA_FUZZ=ON), and the
# generator that makes some of their seeds.
fuzz_build() {
  CC=clang cmake -S . -B "$build" -DHTA_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$build" -j "$(nproc)" --target hta-tracegen \
    $(fuzz_harnesses | while read -r name _; do echo "--target fuzz_$name"; done) >/dev/null
}

# Makes the seed corpus in $work/seeds/NAME, the same every time: from the
# real traces (the Kineto reader and the analyses, the Nsight SQLite, CUPTI
# CSV and rocprofv3 readers) and from hta-tracegen --flight-recorder's
# dumps in every encoding (fr_dump).
fuzz_seeds() {
  fuzz/make_corpus.sh "$traces/hta" "$work/seeds"
  /usr/bin/python3 fuzz/make_input_corpus.py "$traces" "$work/seeds"
  mkdir -p "$work/seeds/fr_dump"
  for encoding in torch pickle2 pickle4 pickle5 json; do
    "$build/hta-tracegen" --flight-recorder --ring 10 --encoding $encoding -o "$work/fr_$encoding"
    cp "$work/fr_$encoding/nccl_trace_rank_0" "$work/seeds/fr_dump/$encoding"
  done
}

# The -dict= option of a dictionary named in fuzz/harnesses, or nothing.
fuzz_dict_option() {
  if [ -n "${1:-}" ]; then echo "-dict=fuzz/$1"; fi
}

# Prints what a failed libFuzzer run's log says about the finding.
fuzz_finding() {
  grep -E 'ERROR|runtime error|SUMMARY|invariant|Test unit written' "$1" | head -n 8
}
