"""steps/nnet/train.sh --network-type lstm|blstm trains a recurrent network from
make-(b)lstm-proto.py's prototype with its default --train-tool (nnet-train-multistream.py,
nnet-train-multistream-perutt.py), and steps/nnet/decode.sh decodes and scores with it, per
utterance and in context-sensitive chunks; with --num-workers 2, nnet-train-mpi.py trains the
BLSTM in CSC-BPTT chunks over 2 MPI ranks with BMUF.
The Kaldi yesno model, alignments and graph, with features synthesised along the alignments."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst

import re

import pytest

from nnetmix.nnet import BlstmProjected, LstmProjected, read_nnet

from helpers import run_script, yesno_recipe


def _train(tmp_path, kind, *extra):
    proto_opts = "--cell-dim=16 --proj-dim=8 --num-layers=1"
    if kind == "blstm":
        proto_opts += " --proj-dim-last=8"  # a BLSTM layer's output: 2 x 8
    return run_script(["steps/nnet/train.sh", "--network-type", kind, "--max-iters", "4",
                       "--learn-rate", "0.01", "--proto-opts", proto_opts, *extra,
                       "data", "data", "lang", "mono", "mono", f"exp/{kind}"],
                      cwd=tmp_path)


def _decode(tmp_path, kind, name, *extra):
    return run_script(["steps/nnet/decode.sh", "--nj", "1", "--scoring-opts",
                       "--min-lmwt 10 --max-lmwt 10", *extra, "mono/graph", "data",
                       f"exp/{kind}/{name}"], cwd=tmp_path)


def _wer(decode_dir) -> float:
    return float((decode_dir / "wer_10_0.0").read_text().split()[1])


@pytest.mark.slow
def test_train_sh_lstm_trains_and_decode_sh_decodes(kaldi_fixtures, tmp_path):
    yesno_recipe(tmp_path, kaldi_fixtures, num_utts=6, noise=0.5)
    proc = _train(tmp_path, "lstm", "--train-tool-opts", "--num-streams=2 --batch-size=10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    exp = tmp_path / "exp" / "lstm"
    proto = (exp / "nnet.proto").read_text().splitlines()
    assert [ln.split()[0] for ln in proto] == ["<LstmProjected>", "<Tanh>", "<AffineTransform>",
                                               "<Softmax>"]
    assert "nnet-train-multistream.py --num-streams=2 --batch-size=10" in proc.stdout
    assert "NOT-RANDOMIZED" in (exp / "log" / "iter01.tr.log").read_text()
    info = run_script(["nnet-info.py", "--print-args=false", str(exp / "final.feature_transform")],
                      cwd=tmp_path, check=True).stdout
    assert "<Splice>" in info and "input-dim 13" in info and "output-dim 13" in info  # splice 0
    final = read_nnet(str(exp / "final.nnet"))
    assert isinstance(final.components[0], LstmProjected) and final.components[0].cell_dim == 16
    accs = [float(a) for a in re.findall(r"FRAME_ACCURACY tr [\d.]+% cv ([\d.]+)%",
                                         (exp / "log" / "train_scheduler.log").read_text())]
    assert len(accs) >= 3 and accs[-1] > 60, accs   # 4 epochs gave 64.5, 71.5, 79.0, 85.2
    proc = _decode(tmp_path, "lstm", "decode")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _wer(exp / "decode") < 25   # 0.00% (the training utterances, decoded)
    proc = _decode(tmp_path, "lstm", "decode_chunked", "--chunk-size", "64",
                   "--chunk-left-context", "21", "--chunk-right-context", "21",
                   "--chunk-overlap", "32")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = (exp / "decode_chunked" / "log" / "decode.1.log").read_text()
    assert "--chunk-size=64 --chunk-left-context=21 --chunk-right-context=21" in log
    assert "Forwarding in chunks of 64 frames" in log
    assert _wer(exp / "decode_chunked") < 25   # 0.00%
    print(f"\nLSTM on yesno: CV frame accuracy by epoch {accs}; WER {_wer(exp / 'decode')}% "
          f"per utterance, {_wer(exp / 'decode_chunked')}% in chunks")


@pytest.mark.slow
def test_train_sh_blstm_csc_bptt_and_bad_options(kaldi_fixtures, tmp_path):
    """The BLSTM's default tool, nnet-train-multistream-perutt.py, with CSC-BPTT's chunk options
    (--train-tool-opts), decoded in chunks of the same shape (~2 min)."""
    yesno_recipe(tmp_path, kaldi_fixtures, num_utts=4, noise=0.5)
    proc = _train(tmp_path, "blstm", "--train-tool-opts",
                  "--num-streams=8 --chunk-size=32 --chunk-left-context=8 --chunk-right-context=8")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    exp = tmp_path / "exp" / "blstm"
    final = read_nnet(str(exp / "final.nnet"))
    assert isinstance(final.components[0], BlstmProjected)
    assert (final.components[0].output_dim, final.components[2].input_dim) == (16, 16)
    log = (exp / "log" / "iter01.tr.log").read_text()
    assert "nnet-train-multistream-perutt.py" in log and "--chunk-size=32" in log
    accs = [float(a) for a in re.findall(r"FRAME_ACCURACY tr [\d.]+% cv ([\d.]+)%",
                                         (exp / "log" / "train_scheduler.log").read_text())]
    assert len(accs) >= 3 and accs[-1] > 60, accs   # 4 epochs gave 67.2, 83.5, 86.4, 91.4
    proc = _decode(tmp_path, "blstm", "decode_chunked", "--chunk-size", "32",
                   "--chunk-left-context", "8", "--chunk-right-context", "8", "--chunk-overlap",
                   "16")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _wer(exp / "decode_chunked") < 25   # 0.00% (32 words)
    print(f"\nBLSTM (CSC 8-32+8) on yesno: CV frame accuracy by epoch {accs}; WER "
          f"{_wer(exp / 'decode_chunked')}% in chunks")
    for extra, what in ((["--optimizer", "ngsgd"], "trains with SGD here"),
                        (["--num-workers", "2", "--train-tool", "nnet-train-multistream.py"],
                         "give the MPI tool's options instead"),
                        (["--dbn", "mono/final.mdl"], "--dbn is for --network-type dnn"),
                        (["--train-tool", "no-such-tool.py"], "no such training tool")):
        proc = _train(tmp_path, "blstm", *extra)
        assert proc.returncode == 1 and what in proc.stderr, proc.stderr
    proc = run_script(["steps/nnet/train.sh", "--network-type", "rnn", "data", "data", "lang",
                       "mono", "mono", "exp/rnn"], cwd=tmp_path)
    assert proc.returncode == 1 and "unknown --network-type rnn" in proc.stderr


@pytest.mark.slow
def test_train_sh_blstm_csc_bmuf_over_two_workers(kaldi_fixtures, tmp_path):
    """train.sh --network-type blstm --num-workers 2 --bmuf true: each epoch is
    nnet-train-mpi.py --stream-mode=perutt over 2 ranks with the CSC options of
    --train-tool-opts (BMUF blocks of 4 steps of chunks); it learns and decodes (~2 min)."""
    yesno_recipe(tmp_path, kaldi_fixtures, num_utts=4, noise=0.5)
    proc = _train(tmp_path, "blstm", "--num-workers", "2", "--bmuf", "true",
                  "--average-every", "4", "--train-tool-opts",
                  "--num-streams=8 --chunk-size=32 --chunk-left-context=8 --chunk-right-context=8")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    exp = tmp_path / "exp" / "blstm"
    assert "2 MPI workers per epoch (BMUF every 4 minibatches)" in proc.stdout
    assert isinstance(read_nnet(str(exp / "final.nnet")).components[0], BlstmProjected)
    log = (exp / "log" / "iter01.tr.log").read_text()
    assert "nnet-train-mpi.py" in log and "--stream-mode=perutt" in log and "--chunk-size=32" in log
    assert "MPI summary: 2 ranks" in log
    assert "one multi-stream step (up to 8 chunks 8-32+8)" in \
        (exp / "log" / "iter01.tr.rank1.log").read_text()
    accs = [float(a) for a in re.findall(r"FRAME_ACCURACY tr [\d.]+% cv ([\d.]+)%",
                                         (exp / "log" / "train_scheduler.log").read_text())]
    assert len(accs) >= 3 and accs[-1] > 60, accs
    proc = _decode(tmp_path, "blstm", "decode_chunked", "--chunk-size", "32",
                   "--chunk-left-context", "8", "--chunk-right-context", "8", "--chunk-overlap",
                   "16")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _wer(exp / "decode_chunked") < 25
    print(f"\nBLSTM (CSC 8-32+8, 2 workers, BMUF) on yesno: CV frame accuracy by epoch {accs}; "
          f"WER {_wer(exp / 'decode_chunked')}% in chunks")
