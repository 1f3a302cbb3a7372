"""steps/nnet/train.sh and steps/nnet/decode.sh end to end on the Kaldi yesno model, alignments and
graph with features synthesised along the alignments: the feature chain is written once per set
as a pipeline (feats_tr.json, feats_cv.json, decode/feats.JOB.json) that every tool reads."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import gzip

from nnetmix.feat import FeaturePipeline

from helpers import ROOT, run_script, yesno_recipe


def test_train_and_decode_nnet_with_pipelines(kaldi_fixtures, tmp_path):
    yesno_recipe(tmp_path, kaldi_fixtures, num_utts=8, noise=0.5)
    proc = run_script(["steps/nnet/train.sh", "--hid-layers", "1", "--hid-dim", "16", "--splice",
                       "2", "--delta-opts", "--delta-order=2", "--max-iters", "1",
                       "--minibatch-size", "64", "data", "data", "lang", "mono", "mono", "exp/dnn"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dnn = tmp_path / "exp" / "dnn"
    tr = FeaturePipeline.read(str(dnn / "feats_tr.json"))
    assert (tr.utt_list, tr.cmvn, tr.cmvn_opts, tr.utt2spk, tr.delta_opts) == (
        "exp/dnn/train.scp", "scp:data/cmvn.scp", "--norm-means=true --norm-vars=false",
        "ark:data/utt2spk", "--delta-order=2")
    assert FeaturePipeline.read(str(dnn / "feats_cv.json")).utt_list == "exp/dnn/cv.scp"
    assert "feature dim 39 (input of the feature transform), splice +/-2" in proc.stdout
    assert (dnn / "cmvn_opts").read_text() == "--norm-means=true --norm-vars=false\n"
    assert "Written the feature transform (39 -> 195)" in \
        (dnn / "log" / "feature_transform.log").read_text()
    proc = run_script(["steps/nnet/decode.sh", "--nj", "2", "--scoring-opts",
                       "--min-lmwt 10 --max-lmwt 10", "mono/graph", "data", "exp/dnn/decode"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dec = dnn / "decode"
    for n in (1, 2):
        p = FeaturePipeline.read(str(dec / f"feats.{n}.json"))
        assert (p.utt_list, p.cmvn, p.delta_opts) == (
            f"data/split2/{n}/feats.scp", f"scp:data/split2/{n}/cmvn.scp", "--delta-order=2")
        assert "Done 4 utterances" in (dec / "log" / f"decode.{n}.log").read_text()
    assert (dec / "wer_10_0.0").read_text().startswith("%WER")
    # --num-threads 2: latgen-faster-mapped-parallel.py, the same lattices
    proc = run_script(["steps/nnet/decode.sh", "--nj", "2", "--num-threads", "2",
                       "--skip-scoring", "true", "mono/graph", "data", "exp/dnn/decode_par"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    par = dnn / "decode_par"
    assert "Decoded with 2 threads." in (par / "log" / "decode.1.log").read_text()
    for n in (1, 2):
        assert gzip.decompress((par / f"lat.{n}.gz").read_bytes()) == \
            gzip.decompress((dec / f"lat.{n}.gz").read_bytes())
    # a second run with more epochs resumes after epoch 1, keeping the first run's log
    (dnn / "final.nnet").unlink()
    first = (dnn / "log" / "train_scheduler.log").read_text()
    proc = run_script(["steps/nnet/train.sh", "--hid-layers", "1", "--hid-dim", "16", "--splice",
                       "2", "--delta-opts", "--delta-order=2", "--max-iters", "2",
                       "--minibatch-size", "64", "data", "data", "lang", "mono", "mono", "exp/dnn"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the earlier run's log is now exp/dnn/log/train_scheduler.log.1" in proc.stdout
    assert (dnn / "log" / "train_scheduler.log.1").read_text() == first
    assert "resuming after epoch 1" in (dnn / "log" / "train_scheduler.log").read_text()


def test_train_sh_refuses_options_that_are_not_whole_numbers(tmp_path):
    """--num-workers abc printed "integer expression expected" and exited 0; --hid-layers -1
    left a 0-byte nnet.proto. Each is now one line naming the option, before anything runs."""
    for option, value, least in (("--num-workers", "abc", 1), ("--hid-layers", "-1", 0),
                                 ("--max-iters", "2.5", 1), ("--minibatch-size", "", 1)):
        proc = run_script(["steps/nnet/train.sh", option, value, "data", "data", "lang", "ali",
                           "ali", tmp_path / "exp"], cwd=ROOT)
        assert proc.returncode == 1, proc
        assert f"steps/nnet/train.sh: {option} must be an integer >= {least}, got '{value}'" \
            in proc.stderr.splitlines(), proc.stderr
        assert not (tmp_path / "exp").exists()


def test_train_sh_passes_overlap_mixing_to_the_mpi_tool(kaldi_fixtures, tmp_path):
    """--num-workers 2 --overlap-mixing true: each epoch's nnet-train-mpi.py gets
    --overlap-mixing=true and mixes overlapped (its ranks' logs say so)."""
    yesno_recipe(tmp_path, kaldi_fixtures, num_utts=8, noise=0.5)
    proc = run_script(["steps/nnet/train.sh", "--hid-layers", "1", "--hid-dim", "16", "--splice",
                       "2", "--max-iters", "1", "--minibatch-size", "64", "--num-workers", "2",
                       "--average-every", "2", "--overlap-mixing", "true", "data", "data",
                       "lang", "mono", "mono", "exp/dnn"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = tmp_path / "exp" / "dnn" / "log"
    assert "--overlap-mixing=true" in (log / "iter01.tr.log").read_text()
    assert "overlapped mixes" in (log / "iter01.tr.rank1.log").read_text()


def test_train_sh_hands_ngsgd_opts_to_the_mpi_tool_and_its_log_counts_the_limit(kaldi_fixtures,
                                                                                tmp_path):
    """--optimizer ngsgd --ngsgd-opts --max-change-per-sample=1e-9 (one word, as the harbour
    campaign's max_change passes it through --dnn-opts) over 2 workers: the epoch's
    nnet-train-mpi.py gets it, every layer update is limited, and nnetmix.train.runlog reads
    the count from the epoch's log as bench/experiments stores it."""
    from nnetmix.train.runlog import read_timings
    yesno_recipe(tmp_path, kaldi_fixtures, num_utts=8, noise=0.5)
    proc = run_script(["steps/nnet/train.sh", "--hid-layers", "1", "--hid-dim", "16", "--splice",
                       "2", "--max-iters", "1", "--minibatch-size", "64", "--num-workers", "2",
                       "--optimizer", "ngsgd", "--ngsgd-opts", "--max-change-per-sample=1e-9",
                       "data", "data", "lang", "mono", "mono", "exp/dnn"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = tmp_path / "exp" / "dnn" / "log"
    assert "--max-change-per-sample=1e-9" in (log / "iter01.tr.log").read_text()
    train, _ = read_timings(log)
    assert train[0].layer_updates == train[0].minibatches * 2 > 0     # 2 affine layers
    assert train[0].limited == train[0].layer_updates
