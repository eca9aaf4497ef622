# Sourced by the cross-rank benchmarks (bench_collectives.sh, bench_p2p.sh,
# bench_jobpath.sh): their generated job, and one hta-mpi run over MPI with
# each process's peak RSS recorded and the phase times that hta-mpi -v
# prints after the last trace.
#
#   generated_job TRACES RANKS BUILD [hta-tracegen options...]
# writes the job into TRACES unless it already holds RANKS rank files.
generated_job() {
  local traces=$1 ranks=$2 build=$3
  shift 3
  if [ "$(find "$traces" -name 'rank-*.json' 2>/dev/null | wc -l)" != "$ranks" ]; then
    rm -rf "$traces"
    "$build/hta-tracegen" "$@" -o "$traces"
  fi
}
#
#   measured_mpi_run WORK PROCESSES BUILD TRACES [hta-mpi options...]
# prints "cross gather write whole root_mb busiest_mb cpu_s" (seconds, MiB;
# cpu_s: the largest CPU time, user + system, of one process, which a
# loaded machine moves less than the wall time).
measured_mpi_run() {
  local work=$1 processes=$2 build=$3 traces=$4 start line whole root busiest cpu kb user sys p
  shift 4
  cat > "$work/rss.sh" <<EOS
#!/bin/sh
exec /usr/bin/time -f "%M %U %S" -o "$work/rss.\$OMPI_COMM_WORLD_RANK" "\$@"
EOS
  chmod +x "$work/rss.sh"
  start=$(date +%s.%N)
  line=$(mpirun -n "$processes" --oversubscribe "$work/rss.sh" "$build/hta-mpi" -q -v --force \
           "$@" -o "$work/results.h5" "$traces" 2>&1 | grep 'after the last trace')
  whole=$(echo "$(date +%s.%N) - $start" | bc)
  read -r gather cross write < <(echo "$line" | sed -E 's/.*gather ([0-9.]+) s, cross-rank ([0-9.]+) s, HDF5 write ([0-9.]+) s/\1 \2 \3/')
  read -r root _ < "$work/rss.0"
  busiest=0
  cpu=0
  for p in $(seq 0 $((processes - 1))); do
    read -r kb user sys < "$work/rss.$p"
    [ "$kb" -gt "$busiest" ] && busiest=$kb
    cpu=$(echo "$user + $sys" | bc | awk -v c="$cpu" '{print ($1 > c ? $1 : c)}')
  done
  echo "$cross $gather $write $whole $((root / 1024)) $((busiest / 1024)) $cpu"
}
