#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# Sourced by steps/*.sh once their options are parsed: takes the lock of the directory the step
# writes (bin/lock-dir.py: <dir>/.lock naming this script's host, pid, command and start time)
# and gives it back when the script exits, however it exits (docs/troubleshooting.md "Locks: one job per directory").
#   . utils/lock_dir.sh <dir>
# A second job into <dir> stops here, with one ERROR line naming the job that holds it. What the
# step starts inherits $NNETMIX_LOCK_TOKEN, so the scheduler and the MPI ranks of this job use
# <dir> without waiting on this lock.

if [ $# -ne 1 ]; then
  echo "utils/lock_dir.sh: usage: . utils/lock_dir.sh <dir>" >&2
  exit 1
fi
NNETMIX_LOCK_TOKEN=$(lock-dir.py --print-args=false --pid=$$ acquire "$1") || exit 1
export NNETMIX_LOCK_TOKEN
nnetmix_locked_dirs+=("$1")

nnetmix_unlock() {
  local d
  for d in "${nnetmix_locked_dirs[@]}"; do
    lock-dir.py --print-args=false --pid=$$ release "$d" || true
  done
  nnetmix_locked_dirs=()
}
trap nnetmix_unlock EXIT
trap 'exit 130' INT   # so that EXIT runs on Ctrl-C and kill, as it does on errors
trap 'exit 143' TERM
trap 'exit 129' HUP
