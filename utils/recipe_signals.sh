# Copyright 2026 nnetmix authors. Apache 2.0.
# Sourced first by every recipe's run.sh (before utils/parse_options.sh): a signal to run.sh ends
# its whole process tree. Bash runs a trap only once the foreground command has ended, so a plain
# `kill <pid>` of run.sh would end run.sh alone and leave its stage (steps/train_mono.sh and its
# utils/run.py jobs) running, writing exp/ and holding its lock. Instead run.sh becomes
# utils/recipe_group.py (exec: the same pid), which runs run.sh again as the leader of a process
# group of its own and waits for it: SIGTERM, SIGINT (Ctrl-C) or SIGHUP to run.sh's pid ends the
# whole group (SIGTERM for SIGINT), utils/run.py stops its jobs and the steps give back their
# locks (utils/lock_dir.sh), and run.sh exits 128 + the signal's number once the group's leader
# has ended. The inner run.sh's exit status and output are run.sh's.
#   . utils/recipe_signals.sh

if [ -z "${NNETMIX_RECIPE_GROUP:-}" ] && command -v python3 > /dev/null; then
  export NNETMIX_RECIPE_GROUP=$$
  exec python3 -S "${BASH_SOURCE[0]%/*}/recipe_group.py" "${BASH:-bash}" "$0" "$@"
fi
