#!/bin/sh
# Installs hta-mpi's dependencies from Debian 12 packages: what building
# and running it needs (the README's first command, scripts/example.sh),
# and with --test also what only the tests need (scripts/test.sh).
# Run as root (or with sudo) on a fresh machine; safe to run again.
#
# Building and running: the compilers, Open MPI, parallel HDF5, cJSON,
# zlib, ISA-L (faster gzip), libsqlite3-dev (Nsight Systems exports);
# python3 with h5py, pandas, numpy: reading the results; python3-pip,
# python3-setuptools: `pip install ./python`; python3-matplotlib:
# hta-mpi-plot.
# Tests only: slurm-wlm and munge (tests/test_slurm.py starts a one-node
# cluster); chromium (the report test's screenshot); clang and
# libclang-rt-14-dev (only recommended by clang, so named here): the
# libFuzzer harnesses; valgrind: scripts/valgrind.sh; sqlite3: the SQLite
# reader's benchmark baseline; libc6-dbg: names the C library's frames in
# the sanitized suite's leak reports, as tests/lsan.supp needs.
#
# usage: scripts/install-deps.sh [--test]
set -eu
packages="build-essential cmake pkg-config libopenmpi-dev openmpi-bin \
libhdf5-openmpi-dev libcjson-dev zlib1g-dev libisal-dev libsqlite3-dev \
python3 python3-h5py python3-pandas python3-numpy python3-pip python3-setuptools \
python3-matplotlib"
test_packages="slurm-wlm munge chromium clang libclang-rt-14-dev valgrind sqlite3 libc6-dbg"
case "${1:-}" in
  --test) packages="$packages $test_packages" ;;
  "") ;;
  *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing
fi
