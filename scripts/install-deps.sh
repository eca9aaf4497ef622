#!/bin/sh
# Installs hta-mpi's build and test dependencies from Debian 12 packages.
# Run as root (or with sudo) on a fresh machine; safe to run again.
set -eu
packages="build-essential cmake pkg-config libopenmpi-dev openmpi-bin \
libhdf5-openmpi-dev libcjson-dev zlib1g-dev python3 python3-h5py python3-pandas \
python3-numpy"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing
fi
