"""bin/prob-to-post.py, logprob-to-post.py, post-to-weights.py, scale-post.py, sum-post.py and weight-post.py behave
like Kaldi's (src/bin/, hmm/posterior.cc)."""
import numpy as np
import pytest

from helpers import load_bin
from nnetmix.hmm.post_tables import merge_posteriors
from nnetmix.kaldi import SequentialReader, TableWriter


def write(path, items, kind, text=False):
    with TableWriter(f"ark{',t' if text else ''}:{path}", kind) as w:
        for k, v in items.items():
            w[k] = v
    return f"ark:{path}"


def read(spec, kind="post"):
    with SequentialReader(spec, kind) as r:
        return dict(r)


def one_error(err):
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(lines) == 1, err
    return lines[0]


POST = {"a": [[(3, 1.0)], [(4, 0.5), (5, 0.5)]], "b": [[(1, 0.25)]]}


@pytest.fixture
def post(tmp_path):
    return write(tmp_path / "p.ark", POST, "post")


def test_prob_to_post(tmp_path, capsys):
    probs = {"u": np.array([[0.5, 0.005, 0.495], [0.0, 0.02, 0.98]], np.float32)}
    spec = write(tmp_path / "probs.ark", probs, "mat")
    tool = load_bin("prob-to-post.py")
    assert tool.main(["--random-prune=false", spec, f"ark,t:{tmp_path}/p.ark"]) == 0
    assert (tmp_path / "p.ark").read_text() == "u [ 0 0.5 2 0.495 ] [ 1 0.02 2 0.98 ] \n"
    assert "Converted 1 log-prob matrices to posteriors." in capsys.readouterr().err
    # random pruning keeps a small p as min-post with probability p / min-post: the mean holds
    big = {"u": np.full((4000, 1), 0.004, np.float32)}
    spec = write(tmp_path / "big.ark", big, "mat")
    assert tool.main([spec, f"ark:{tmp_path}/q.ark"]) == 0
    kept = [f for f in read(f"ark:{tmp_path}/q.ark")["u"] if f]
    assert all(f == [(0, pytest.approx(0.01))] for f in kept)
    assert abs(len(kept) / 4000 - 0.4) < 0.04


def test_logprob_to_post_is_prob_to_post_of_exp(tmp_path, capsys):
    """Kaldi's logprob-to-post: prob-to-post of Exp(log-prob) in float32, same options."""
    probs = np.array([[0.5, 0.005, 0.495], [1e-30, 0.02, 0.98]], np.float32)
    spec = write(tmp_path / "lp.ark", {"u": np.log(probs)}, "mat")
    tool = load_bin("logprob-to-post.py")
    assert tool.main(["--random-prune=false", spec, f"ark:{tmp_path}/p.ark"]) == 0
    assert "Converted 1 log-prob matrices to posteriors." in capsys.readouterr().err
    got = read(f"ark:{tmp_path}/p.ark")["u"]
    want = np.exp(np.log(probs))
    assert [[j for j, _ in f] for f in got] == [[0, 2], [1, 2]]
    for f, row in zip(got, want):
        for j, w in f:
            assert np.float32(w) == row[j]
    assert tool.main(["--min-post=0.6", "--random-prune=false", spec,
                      f"ark,t:{tmp_path}/q.ark"]) == 0
    assert (tmp_path / "q.ark").read_text() == "u [ ] [ 2 0.98 ] \n"


def test_post_to_weights(tmp_path, post, capsys):
    assert load_bin("post-to-weights.py").main([post, f"ark,t:{tmp_path}/w.ark"]) == 0
    assert (tmp_path / "w.ark").read_text() == "a  [ 1 1 ]\nb  [ 0.25 ]\n"
    assert "Done converting 2 posteriors to weights." in capsys.readouterr().err
    (tmp_path / "bad.ark").write_text("a [ 3 x ]\n")
    assert load_bin("post-to-weights.py").main([f"ark:{tmp_path}/bad.ark",
                                                f"ark:{tmp_path}/v.ark"]) == 1
    assert "bad.ark" in one_error(capsys.readouterr().err) and not (tmp_path / "v.ark").exists()


def test_scale_post(tmp_path, post, capsys):
    tool = load_bin("scale-post.py")
    assert tool.main([post, "2", f"ark,t:{tmp_path}/s.ark"]) == 0
    assert (tmp_path / "s.ark").read_text() == "a [ 3 2 ] [ 4 1 5 1 ] \nb [ 1 0.5 ] \n"
    assert "Done 2 posteriors;  0 had no scales." in capsys.readouterr().err
    (tmp_path / "scales").write_text("a 0.5\n")
    assert tool.main([post, f"ark:{tmp_path}/scales", f"ark,t:{tmp_path}/t.ark"]) == 0
    assert (tmp_path / "t.ark").read_text() == "a [ 3 0.5 ] [ 4 0.25 5 0.25 ] \n"
    err = capsys.readouterr().err
    assert "No scale for utterance b" in err and "Done 1 posteriors;  1 had no scales." in err
    with TableWriter(f"ark:{tmp_path}/bin_scales", "float") as w:  # binary float table
        w["b"] = -1.0
    assert tool.main([post, f"ark:{tmp_path}/bin_scales", f"ark,t:{tmp_path}/u.ark"]) == 0
    assert (tmp_path / "u.ark").read_text() == "b [ 1 -0.25 ] \n"
    assert tool.main([post, "x2", f"ark:{tmp_path}/v.ark"]) == 1
    assert "Bad second argument x2" in one_error(capsys.readouterr().err)
    (tmp_path / "bad_scales").write_text("a 0.5 0.25\n")
    assert tool.main([post, f"ark:{tmp_path}/bad_scales", f"ark:{tmp_path}/v.ark"]) == 1
    line = one_error(capsys.readouterr().err)
    assert "bad_scales" in line and "key a" in line and not (tmp_path / "v.ark").exists()


def test_merge_posteriors():
    p1 = [[(2, 0.5), (1, 0.5)], [(1, 1.0)]]
    p2 = [[(2, -0.5), (3, 0.25)], [(4, 1.0)]]
    assert merge_posteriors(p1, p2) == ([[(1, 0.5), (3, 0.25)], [(1, 1.0), (4, 1.0)]], 1)
    assert merge_posteriors(p1, p2, merge=False)[0][0] == [(1, 0.5), (2, -0.5), (2, 0.5),
                                                           (3, 0.25)]
    assert merge_posteriors(p1, p2, drop_frames=True)[0][1] == []


def test_sum_post(tmp_path, post, capsys):
    other = write(tmp_path / "o.ark", {"a": [[(3, 1.0)], [(6, 1.0)]], "b": [[], []]}, "post",
                  text=True)
    tool = load_bin("sum-post.py")
    assert tool.main(["--scale2=-0.5", post, other, f"ark,t:{tmp_path}/s.ark"]) == 0
    assert (tmp_path / "s.ark").read_text() == "a [ 3 0.5 ] [ 4 0.5 5 0.5 6 -0.5 ] \n"
    err = capsys.readouterr().err
    assert "Posteriors have mismatched sizes 1 vs. 2 for key b" in err
    assert "Processed 2 frames; for 1 frames there was no overlap, i.e. 50%" in err
    assert "Done adding 1 posteriors;  1 with errors." in err
    assert tool.main(["--drop-frames=true", post, other, f"ark,t:{tmp_path}/d.ark"]) == 0
    assert (tmp_path / "d.ark").read_text() == "a [ 3 2 ] [ ] \n"
    lone = write(tmp_path / "c.ark", {"c": [[]]}, "post")
    assert tool.main([post, lone, f"ark:{tmp_path}/e.ark"]) == 1  # none done: no output
    err = capsys.readouterr().err
    assert "Second set of posteriors has nothing for key a, producing no output." in err
    assert "e.ark: nothing to write" in one_error(err) and not (tmp_path / "e.ark").exists()


def test_weight_post(tmp_path, post, capsys):
    weights = write(tmp_path / "w.ark", {"a": np.array([0.0, 2.0, 7.0], np.float32)}, "vec")
    tool = load_bin("weight-post.py")
    assert tool.main([post, weights, f"ark,t:{tmp_path}/o.ark"]) == 0
    assert (tmp_path / "o.ark").read_text() == "a [ ] [ 4 1 5 1 ] \n"
    err = capsys.readouterr().err
    assert "No weights for utterance b" in err and "Scaled 1 posteriors; errors on 1" in err
    assert tool.main(["--length-tolerance=0", post, weights, f"ark:{tmp_path}/q.ark"]) == 1
    err = capsys.readouterr().err
    assert "Weights for utterance a have wrong size, 3 vs. 2" in err
    assert "q.ark: nothing to write" in one_error(err) and not (tmp_path / "q.ark").exists()
