#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Installs the Debian packages the recipes need (called by `make install`); quiet when none is
# missing. Without root or apt-get it prints the exact command to run instead.
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "Usage: $0 <debian-package> [<debian-package> ...]" >&2
  echo " e.g.: $0 espeak-ng sox" >&2
  exit 1
fi
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "$0: installing Debian packages: ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  echo "$0: installing Debian packages: ${missing[*]}"
  sudo apt-get update -qq >/dev/null
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "$0: missing Debian packages: ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
