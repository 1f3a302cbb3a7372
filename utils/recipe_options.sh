# Copyright 2026 nnetmix authors. Apache 2.0.
# Option handling the recipes share (egs/harbour/s5, egs/swbd/s5): source it from run.sh after
# the configuration section and before utils/parse_options.sh.
#   help_message          --help: the recipe's header comments, then every option of its
#                         configuration section with its default and comment
#   check_network_opts    after parse_options.sh: --dnn-type dnn|lstm|blstm and
#                         --dnn-activation sigmoid|relu (relu with dnn only), else one line, exit 1
#   rnn_proto_opts        make-lstm-proto.py / make-blstm-proto.py's options from --dnn-type,
#                         --rnn-layers, --rnn-cell-dim and --rnn-proj-dim (steps/nnet/train.sh
#                         --proto-opts)
#   relu_proto_opts       make-nnet-proto.py's options of a ReLU DNN (Kaldi's rm ReLU recipe:
#                         <ParametricRelu>, zero hidden biases, weights N(0, 0.02), no Glorot
#                         scaling), for train.sh --proto-opts

if [ -f "$0" ]; then
  help_message="$(awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0")
Options (--name value; defaults):
$(sed -n '/^# Begin configuration section/,/^# End configuration section/p' "$0" | grep -v '^#' \
   | awk -F= '{ n = $1; gsub(/_/, "-", n); v = $0; sub(/^[^=]*=/, "", v); sub(/ +#/, "  #", v); printf "  --%-17s %s\n", n, v }')"
fi

check_network_opts() {
  case $dnn_type:$dnn_activation in
    dnn:sigmoid|dnn:relu|lstm:sigmoid|blstm:sigmoid) ;;
    *) echo "$0: --dnn-type must be dnn, lstm or blstm and --dnn-activation sigmoid or relu" \
            "(relu with dnn only), got '$dnn_type' '$dnn_activation'" >&2; exit 1 ;;
  esac
}

rnn_proto_opts() {
  # a BLSTM layer's output is both directions' projections side by side
  local opts="--cell-dim=$rnn_cell_dim --proj-dim=$rnn_proj_dim --num-layers=$rnn_layers"
  [ "$dnn_type" == blstm ] && opts="$opts --proj-dim-last=$rnn_proj_dim"
  echo "$opts"
}

relu_proto_opts() {
  echo "--activation-type=<ParametricRelu> --param-stddev-factor=0.02 --hid-bias-mean=0" \
       "--hid-bias-range=0 --no-glorot-scaled-stddev --no-smaller-input-weights"
}
