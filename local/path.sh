# Environment for a recipe (egs/<corpus>/s5/path.sh links here): the repository's venv, its bin/ and
# utils/ on PATH, C locale. Sourced by run.sh and by every steps/ and local/ script run from the
# recipe directory ([ -f path.sh ] && . ./path.sh).
NNETMIX_ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)   # local/..
export NNETMIX_ROOT
if [ -f "$NNETMIX_ROOT/.venv/bin/activate" ]; then
  . "$NNETMIX_ROOT/.venv/bin/activate"   # made by `make install`; absent when nnetmix is installed elsewhere
fi
export PATH=$NNETMIX_ROOT/bin:$NNETMIX_ROOT/utils:$PATH
export LC_ALL=C   # Kaldi lists are sorted in the C locale
# Open MPI refuses to start as root without these (containers); harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PYTHONUNBUFFERED=1   # job logs show progress as it happens
