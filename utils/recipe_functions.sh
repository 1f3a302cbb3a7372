# Copyright 2026 nnetmix authors. Apache 2.0.
# Sourced by every recipe's run.sh after utils/parse_options.sh: the helpers each run.sh would
# otherwise define again.
#   log <message>                          a dated progress line naming run.sh's line, e.g.
#                                          2024-01-01 12:00:00 (run.sh:88:main) Stage 3: ...
#   need <stage> <path> <where it comes from>
#                                          a stage's input, checked before any work: without it
#                                          one line on stderr and exit 1
#   . utils/recipe_functions.sh

log() {
  local fname=${BASH_SOURCE[1]##*/}
  echo -e "$(date '+%Y-%m-%d %H:%M:%S') (${fname}:${BASH_LINENO[0]}:${FUNCNAME[1]}) $*"
}

need() {
  [ -e "$2" ] || { echo "$0: stage $1 needs $2 ($3): no such file or directory" >&2; exit 1; }
}
