"""Messages that must say what happens: a truncated nnet1 text model says the file ends early
(not a library-internal hint), and a 'nan' loss says the training stops (no epoch is rejected
and tried again)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import load_bin
from helpers import class_run_utts, write_tables

from nnetmix.errors import FormatError
from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax, read_nnet


def _net(rng) -> Nnet:
    return Nnet([AffineTransform(5, 6, rng.standard_normal((6, 5)), rng.uniform(-1, 1, 6)),
                 Sigmoid(6, 6), AffineTransform(6, 3, rng.standard_normal((3, 6)), np.zeros(3)),
                 Softmax(3, 3)])


def test_truncated_text_model_says_the_file_ends(tmp_path):
    """Cut a text model at every byte: each read fails with a FormatError naming the file, never
    with 'unknown component' for a token cut short or the internal "read it as kind 'mat'"."""
    full = tmp_path / "full.nnet"
    _net(np.random.default_rng(3)).write(str(full), binary=False)
    data = full.read_bytes()
    cut = tmp_path / "cut.nnet"
    vector_cuts = 0
    for n in range(1, len(data.rstrip())):
        cut.write_bytes(data[:n])
        with pytest.raises(FormatError) as e:
            read_nnet(str(cut))
        msg = str(e.value)
        assert msg.startswith(f"{cut}: byte "), msg
        assert "read it as kind" not in msg and "unknown component" not in msg, (n, msg)
        if "text vector" in msg and "'['" not in msg:
            assert "truncated text vector: the file ends before its ']'" in msg, msg
            vector_cuts += 1
    assert vector_cuts > 10      # the bias vectors were cut, and said so


def test_a_complete_unknown_component_is_still_named(tmp_path):
    path = tmp_path / "odd.nnet"
    path.write_text("<Nnet>\n<Frobnicate> 3 3\n</Nnet>\n")
    with pytest.raises(FormatError, match="unknown component: '<Frobnicate>'"):
        read_nnet(str(path))


def test_nan_loss_says_the_training_stops(tmp_path, capsys):
    rng = np.random.default_rng(8)
    utts = class_run_utts(rng, 6, 5, 3, 20, 30, 0.8)
    for _, f, _ in utts:
        f[3, 2] = np.nan                       # a feature extractor gone wrong
    feats, post = write_tables(tmp_path, utts)
    _net(rng).write(str(tmp_path / "init.nnet"))
    rc = load_bin("nnet-train-frmshuff.py").main(
        ["--minibatch-size=16", feats, post, str(tmp_path / "init.nnet"),
         str(tmp_path / "out.nnet")])
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("ERROR")]
    assert rc == 1 and len(errors) == 1, err
    assert "'nan' or 'inf'" in errors[0] and "the training stops here" in errors[0]
    assert "rejected" not in errors[0]
    assert not (tmp_path / "out.nnet").exists()
