"""bin/nnet-train-frmshuff.py and bin/nnet-forward.py through main(argv)."""
import re

import numpy as np
import pytest
from helpers import load_bin, separable_utts, tiny_net, write_tables

from nnetmix.kaldi import SequentialReader, write_object
from nnetmix.nnet import read_nnet
from nnetmix.train import parse_report

LOG_RE = r"LOG \(nnet-train-frmshuff.py\[[^\]]*\]:\w+\(\):[\w.-]+:\d+\) "


@pytest.fixture
def task(tmp_path):
    rng = np.random.default_rng(3)
    utts = separable_utts(rng, 30)
    feats, post = write_tables(tmp_path, utts, "d", drop_targets=("utt0004",))
    _, ali = write_tables(tmp_path, utts, "a", post=False)
    tiny_net(rng).write(str(tmp_path / "nnet.init"))
    return tmp_path, feats, post, ali, utts


@pytest.mark.parametrize("kind", ["post", "ali"])
def test_train_and_cv_log_lines(task, capsys, kind):
    tmp, feats, post, ali, _ = task
    tool = load_bin("nnet-train-frmshuff.py")
    tgt = post if kind == "post" else ali
    rc = tool.main(["--learn-rate=0.01", "--minibatch-size=32", "--randomizer-size=256",
                    f"--targets-kind={kind}", feats, tgt, str(tmp / "nnet.init"),
                    str(tmp / "nnet.1")])
    err = capsys.readouterr().err
    assert rc == 0, err
    missing = 1 if kind == "post" else 0
    assert re.search(LOG_RE + rf"Done {30 - missing} files, {missing} with no tgt_mats, 0 with "
                     r"other errors\. \[TRAINING, RANDOMIZED, [\d.e-]+ min, processing [\d.e+]+ "
                     r"frames per sec; i/o time [\d.]+%\]", err)
    if kind == "post":
        assert re.search(r"WARNING \(nnet-train-frmshuff.py\[.*\) utt0004, missing targets", err)
    assert re.search(LOG_RE + r"AvgLoss: [\d.]+ \(Xent\), \[AvgXent: [\d.]+, AvgTargetEnt: 0\]\n"
                     r"progress: \[\]\nFRAME_ACCURACY >> [\d.]+% <<", err)
    # the scheduler-style grep: awk '{ print $4 }' of the last AvgLoss line
    line = [x for x in err.splitlines() if "AvgLoss:" in x][-1]
    assert float(line.split()[3]) == parse_report(err)["avg_loss"]
    rc = tool.main(["--cross-validate=true", "--minibatch-size=32", f"--targets-kind={kind}",
                    feats, tgt, str(tmp / "nnet.1")])
    err = capsys.readouterr().err
    assert rc == 0 and "[CROSS-VALIDATION, NOT-RANDOMIZED," in err
    assert parse_report(err)["frame_accuracy"] > 50


def test_train_tool_errors(task, capsys):
    tmp, feats, post, _, utts = task
    tool = load_bin("nnet-train-frmshuff.py")
    assert tool.main([feats, post, str(tmp / "nnet.init")]) == 1  # no model-out
    assert "Usage:" in capsys.readouterr().err
    bad = tmp / "bad.ark"
    write_object(str(bad), np.zeros(3), "vec")  # not a posterior table
    big = [(k, f, t + 3) for k, f, t in utts]
    _, post_big = write_tables(tmp, big, "big")
    rc = tool.main([feats, post_big, str(tmp / "nnet.init"), str(tmp / "x")])
    err = capsys.readouterr().err
    assert rc == 1 and not (tmp / "x").exists()
    assert re.search(r"ERROR \(.*\) utterance utt\d+: target [5-7] at frame \d+ is outside the "
                     r"network's output layer \(dim 5", err)
    assert "Traceback" not in err


@pytest.mark.parametrize("option, problem", [
    ("--learn-rate=-0.1", "--learn-rate must be a finite number >= 0, got -0.1"),
    ("--learn-rate=nan", "--learn-rate must be a finite number >= 0, got nan"),
    ("--l2-penalty=-1", "--l2-penalty must be a finite number >= 0, got -1.0"),
    ("--momentum=1.5", r"--momentum must be in \[0, 1\), got 1.5"),
])
def test_update_options_out_of_range_are_refused(task, capsys, option, problem):
    """Kaldi trains with a negative learning rate (uphill) without a word; here it is refused."""
    tmp, feats, post, _, _ = task
    for name, args in [("nnet-train-frmshuff.py", [feats, post, str(tmp / "nnet.init"),
                                                    str(tmp / "x")]),
                       ("nnet-train-scheduler.py", [str(tmp / "nnet.init"), feats, feats, post,
                                                    post, str(tmp / "exp")])]:
        assert load_bin(name).main([option, *args]) == 1
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if line.startswith("ERROR")]
        assert len(errors) == 1 and re.search(problem, errors[0]), err
        assert not (tmp / "x").exists() and not (tmp / "exp" / "final.nnet").exists()


def test_nnet_forward_priors_against_numpy(task, capsys):
    tmp, feats, _, _, utts = task
    counts = np.array([10.5, 0.5, 300.5, 42.5, 0.0])
    (tmp / "counts").write_text(" [ " + " ".join("%g" % c for c in counts) + " ]\n")
    tool = load_bin("nnet-forward.py")
    out = tmp / "out.ark"
    rc = tool.main(["--no-softmax=true", f"--class-frame-counts={tmp}/counts",
                    "--prior-scale=0.8", str(tmp / "nnet.init"), feats, f"ark:{out}"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "1 out of 5 classes have counts lower than 1e-10" in err
    net = read_nnet(str(tmp / "nnet.init"))
    h = net.host_params()
    c = counts.copy()
    c[4] = 1e-10
    logp = np.log(c / c.sum())
    with SequentialReader(f"ark:{out}", "mat") as r:
        got = dict(r)
    for k, f, _ in utts[:5]:
        x = f.astype(np.float64)
        hid = 1 / (1 + np.exp(-(x @ h[0]["W"].T + h[0]["b"])))
        z = hid @ h[2]["W"].T + h[2]["b"]
        ref = z - 0.8 * logp
        np.testing.assert_allclose(got[k][:, :4], ref[:, :4], rtol=1e-4, atol=1e-4)
        assert np.all(got[k][:, 4] < -1e38)  # cut-off class: about -FLT_MAX/2 * scale
    rc = tool.main(["--apply-log=true", str(tmp / "nnet.init"), feats, f"ark:{out}"])
    assert rc == 0
    with SequentialReader(f"ark:{out}", "mat") as r:
        y = dict(r)[utts[0][0]]
    np.testing.assert_allclose(np.exp(y).sum(1), 1.0, rtol=1e-5)
    capsys.readouterr()
    rc = tool.main(["--apply-log=true", "--no-softmax=true", str(tmp / "nnet.init"), feats,
                    f"ark:{out}"])
    assert rc == 1 and "Cannot use both --apply-log=true --no-softmax=true" in \
        capsys.readouterr().err
