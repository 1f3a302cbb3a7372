# Site settings: how jobs run. run.sh and the steps/ scripts take these as --cmd "$train_cmd".
# utils/run.py runs the jobs on this machine (Kaldi's run.pl convention: --max-jobs-run, --mem,
# --gpu and --num-threads are understood; queue options are accepted and ignored). A cluster
# wrapper with the same calling convention replaces it here and nowhere else.
export train_cmd="utils/run.py"
export decode_cmd="utils/run.py --mem 4G"
export cuda_cmd="utils/run.py --gpu 1"
