# Copyright 2026 nnetmix authors. Apache 2.0.
# Sourced first by every recipe's run.sh (before utils/parse_options.sh): a signal to run.sh ends
# its whole process tree. Bash runs a trap only once the foreground command has ended, so a plain
# `kill <pid>` of run.sh would end run.sh alone and leave its stage (steps/train_mono.sh and its
# utils/run.py jobs) running, writing exp/ and holding its lock. Instead run.sh runs itself again
# as the leader of a process group of its own, in the background, and waits for it: SIGTERM,
# SIGINT (Ctrl-C) or SIGHUP to this outer run.sh ends the whole group (SIGTERM for SIGINT: a
# background command ignores SIGINT, and so does all it starts), utils/run.py stops its jobs and
# the steps give back their locks (utils/lock_dir.sh), and run.sh exits 128 + the signal's
# number once the group has ended. The inner run.sh's exit status is run.sh's.
#   . utils/recipe_signals.sh

# The traps are set before the group starts, so that a signal at any moment is handled: before
# the fork it just ends run.sh; between the fork and setsid (no group yet) it ends the process.
if [ -z "${NNETMIX_RECIPE_GROUP:-}" ] && command -v setsid > /dev/null; then
  export NNETMIX_RECIPE_GROUP=$$
  nnetmix_end_group() {
    trap '' TERM INT HUP
    local group=$!   # the group's leader, once started (run.sh starts nothing else before it)
    if [ -n "$group" ]; then
      kill -s "$1" -- -$group 2> /dev/null || kill -s "$1" $group 2> /dev/null
      wait $group
    fi
    exit "$2"
  }
  trap 'nnetmix_end_group TERM 143' TERM
  trap 'nnetmix_end_group TERM 130' INT
  trap 'nnetmix_end_group HUP 129' HUP
  setsid "${BASH:-bash}" "$0" "$@" &
  wait $!
  exit $?
fi
