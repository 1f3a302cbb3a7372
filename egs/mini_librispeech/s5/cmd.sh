# Site settings: how jobs run. run.sh and the steps/ scripts take these as --cmd "$train_cmd".
# The one line below picks the job wrapper; all three keep Kaldi's calling convention
# ([opts] JOB=1:N log command...), so nothing else changes:
#   utils/run.py    this machine (run.pl): --max-jobs-run, --gpu, --num-threads, --num-tasks
#                   are understood, queue options such as --mem are accepted and ignored
#   utils/slurm.py  a Slurm cluster (slurm.pl): options become sbatch options via conf/slurm.conf
#   utils/queue.py  Grid Engine (queue.pl): options become qsub options via conf/queue.conf
cmd=utils/run.py
export train_cmd="$cmd"
export decode_cmd="$cmd --mem 4G"
export cuda_cmd="$cmd --gpu 1"
