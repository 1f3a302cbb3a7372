# Copyright 2026 nnetmix authors. Apache 2.0.
# Turns --foo-bar value into foo_bar=value for the script that sources it (Kaldi semantics).
# Source it after the configuration block:  . utils/parse_options.sh || exit 1
#
#  --foo-bar value   sets foo_bar, which must already be defined by the script (else: invalid option)
#                    a variable whose default is true or false accepts only true or false
#  --config file     sourced before everything else, so the command line overrides it (repeatable)
#  --help, -h        prints $help_message if the script sets one (backslash escapes such as \n
#                    expanded, as Kaldi's printf does), else the script's header comments; to stderr
#  --name=value      refused: scripts take --name value (bin/ tools take --name=value)
#  --                ends the options
# Whatever follows the options stays in "$@" for the script. As in Kaldi, a script with a cmd
# variable refuses to run with it empty (--cmd '' is a scripting error, not "run locally").
# Unlike Kaldi, values are taken literally, never expanded a second time by eval.

_po_prog=$0
_po_script=${BASH_SOURCE[1]:-$0}

# 1. Config files first, wherever --config appears among the options.
_po_i=1
while [ "$_po_i" -le "$#" ]; do
  _po_arg=${!_po_i}
  case "$_po_arg" in
    --config)
      _po_next=$((_po_i + 1))
      if [ "$_po_next" -gt "$#" ]; then
        echo "$_po_prog: option --config needs a value (a config file)" >&2; exit 1
      fi
      _po_file=${!_po_next}
      if [ ! -r "$_po_file" ]; then
        echo "$_po_prog: missing config file $_po_file" >&2; exit 1
      fi
      . "$_po_file" || { echo "$_po_prog: error sourcing config file $_po_file" >&2; exit 1; }
      _po_i=$((_po_i + 2)) ;;
    --*=*) _po_i=$((_po_i + 1)) ;;   # refused below
    -h|--help) _po_i=$((_po_i + 1)) ;;
    --) break ;;
    --*) _po_i=$((_po_i + 2)) ;;
    *) break ;;
  esac
done

# 2. The options themselves, in order; the first argument that is not an option ends them.
while [ "$#" -gt 0 ]; do
  case "$1" in
    -h|--help)
      if [ -n "${help_message:-}" ]; then
        printf '%b\n' "$help_message" >&2
      else
        # the script's header: its leading comment lines after the #! line
        awk 'NR == 1 && /^#!/ { next }
             !started && /^[[:space:]]*$/ { next }
             /^# *Copyright/ { started = 1; next }
             /^#/ { started = 1; sub(/^# ?/, ""); print; next }
             { exit }' "$_po_script" >&2
      fi
      exit 0 ;;
    --*=*)
      echo "$_po_prog: options to scripts take the form --name value: use '${1%%=*} ${1#*=}'," \
           "not '$1' (--name=value is for bin/ tools)" >&2
      exit 1 ;;
    --)
      shift; break ;;
    --config)
      shift 2 ;;
    --*)
      _po_name=${1#--}
      _po_name=${_po_name//-/_}
      if ! [[ "$_po_name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || [ -z "${!_po_name+set}" ]; then
        echo "$_po_prog: invalid option $1" >&2; exit 1
      fi
      if [ "$#" -lt 2 ]; then
        echo "$_po_prog: option $1 needs a value" >&2; exit 1
      fi
      case "${!_po_name}" in
        true|false)
          case "$2" in
            true|false) ;;
            *) echo "$_po_prog: option $1 expects true or false, got '$2'" >&2; exit 1 ;;
          esac ;;
      esac
      printf -v "$_po_name" '%s' "$2"
      shift 2 ;;
    *)
      break ;;
  esac
done

# 3. Kaldi's check on --cmd: an empty job wrapper comes from a script that lost its cmd.sh value.
if [ -n "${cmd+set}" ] && [ -z "$cmd" ]; then
  echo "$_po_prog: empty argument to --cmd option" >&2; exit 1
fi

unset _po_prog _po_script _po_i _po_arg _po_next _po_file _po_name
true
