# Site settings: how jobs run. run.sh and the steps/ scripts take these as --cmd "$train_cmd".
# utils/run.py runs the jobs on this machine (Kaldi's run.pl convention: --max-jobs-run, --mem,
# --gpu, --num-threads and --num-tasks are understood). On a cluster, put a wrapper with the same
# calling convention here and nowhere else. DNN training (cuda_cmd) runs each epoch as one MPI
# job of --dnn-num-workers ranks (RBM pretraining: --rbm-num-workers); each rank takes GPU
# (local rank mod #GPUs).
export train_cmd="utils/run.py"
export decode_cmd="utils/run.py --mem 4G"
export cuda_cmd="utils/run.py --gpu 1"
