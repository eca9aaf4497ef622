#!/bin/sh
# Installs hta-mpi's build and test dependencies from Debian 12 packages.
# Run as root (or with sudo) on a fresh machine; safe to run again.
# slurm-wlm and munge: tests/test_slurm.py starts a one-node cluster;
# python3-matplotlib: hta-mpi-plot; chromium: the report test's screenshot;
# python3-pip, python3-setuptools: the install test's `pip install ./python`.
# clang and libclang-rt-14-dev (only recommended by clang, so named here):
# the libFuzzer harnesses; valgrind: scripts/valgrind.sh; libsqlite3-dev:
# Nsight Systems exports; sqlite3: the SQLite reader's benchmark baseline.
set -eu
packages="build-essential cmake pkg-config libopenmpi-dev openmpi-bin \
libhdf5-openmpi-dev libcjson-dev zlib1g-dev python3 python3-h5py python3-pandas \
python3-numpy python3-pip python3-setuptools libisal-dev libsqlite3-dev sqlite3 \
slurm-wlm munge python3-matplotlib chromium \
clang libclang-rt-14-dev valgrind"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing
fi
