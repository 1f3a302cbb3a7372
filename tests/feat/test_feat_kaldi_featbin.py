"""bin/apply-cmvn-sliding.py, compare-feats.py and extract-feature-segments.py behave like
Kaldi's (src/featbin/; SlidingWindowCmn of src/feat/feature-functions.cc): hand-worked
examples of Kaldi's window placement, similarity and frame rounding, and a float64 transcription
of Kaldi's running-sum loop as the reference for the sliding CMN."""
import numpy as np
import pytest

from helpers import load_bin
from nnetmix.feat.sliding import SlidingCmnOptions, sliding_cmn
from nnetmix.kaldi import SequentialReader, TableWriter


def read(spec):
    with SequentialReader(spec, "mat") as r:
        return dict(r)


def write(spec, mats):
    with TableWriter(spec, "mat") as w:
        for k, v in mats.items():
            w[k] = np.asarray(v, np.float32)


def errors(err):
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("ERROR")]


def kaldi_sliding_cmn(x, o):
    """SlidingWindowCmnInternal line by line: running sums in float64."""
    T, D = x.shape
    out = np.zeros((T, D))
    last_start = last_end = -1
    s, sq = np.zeros(D), np.zeros(D)
    for t in range(T):
        if o.center:
            start = t - o.cmn_window // 2
            end = start + o.cmn_window
        else:
            start, end = t - o.cmn_window, t + 1
        if start < 0:
            end -= start
            start = 0
        if not o.center and end > t:
            end = max(t + 1, o.min_cmn_window)
        if end > T:
            start = max(start - (end - T), 0)
            end = T
        if last_start == -1:
            s, sq = x[start:end].sum(0), (x[start:end] ** 2).sum(0)
        else:
            if start > last_start:
                s, sq = s - x[last_start], sq - x[last_start] ** 2
            if end > last_end:
                s, sq = s + x[last_end], sq + x[last_end] ** 2
        n = end - start
        last_start, last_end = start, end
        out[t] = x[t] - s / n
        if o.norm_vars:
            out[t] = 0.0 if n == 1 else out[t] * np.maximum(sq / n - s * s / n / n, 1e-10) ** -0.5
    return out


def test_sliding_windows_by_hand():
    x = np.array([[1.0], [2.0], [3.0], [4.0]])
    # left window: frames t - cmn_window .. t (cmn_window + 1 of them), at least min-cmn-window
    left = sliding_cmn(x, SlidingCmnOptions(cmn_window=2, min_cmn_window=1))
    np.testing.assert_allclose(left[:, 0], [0.0, 0.5, 1.0, 1.0])
    # centred window of 3, moved inside the utterance at both ends
    centre = sliding_cmn(x, SlidingCmnOptions(cmn_window=3, center=True))
    np.testing.assert_allclose(centre[:, 0], [-1.0, 0.0, 0.0, 1.0])
    # the default min-cmn-window (100) covers a short utterance whole: utterance CMN
    whole = sliding_cmn(x, SlidingCmnOptions())
    np.testing.assert_allclose(whole[:, 0], x[:, 0] - 2.5)


@pytest.mark.parametrize("frames", [1, 2, 9, 130, 700])
@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("norm_vars", [False, True])
@pytest.mark.parametrize("window", [(600, 100), (10, 3), (7, 7), (4, 1)])
def test_sliding_cmn_is_kaldis_loop(frames, center, norm_vars, window):
    rng = np.random.default_rng(frames)
    x = (rng.standard_normal((frames, 5)) * 3 + 7).astype(np.float32).astype(np.float64)
    o = SlidingCmnOptions(cmn_window=window[0], min_cmn_window=window[1], center=center,
                          norm_vars=norm_vars)
    np.testing.assert_allclose(sliding_cmn(x, o), kaldi_sliding_cmn(x, o), rtol=0, atol=2e-5)


def test_apply_cmvn_sliding_tool(tmp_path, capsys):
    rng = np.random.default_rng(3)
    mats = {"a": rng.standard_normal((40, 3)), "b": np.zeros((0, 3)),
            "c": np.c_[rng.standard_normal((12, 2)), np.full(12, 5.0)]}
    write(f"ark:{tmp_path}/in.ark", mats)
    tool = load_bin("apply-cmvn-sliding.py")
    argv = ["--norm-vars=true", "--center=true", "--cmn-window=10", "--min-cmn-window=5",
            "--max-warnings=2",
            f"ark:{tmp_path}/in.ark", f"ark:{tmp_path}/out.ark"]
    assert tool.main(argv) == 0
    err = capsys.readouterr().err
    got = read(f"ark:{tmp_path}/out.ark")
    assert sorted(got) == ["a", "c"]
    o = SlidingCmnOptions(cmn_window=10, min_cmn_window=5, center=True, norm_vars=True)
    for k in got:
        ref = kaldi_sliding_cmn(np.asarray(mats[k], np.float32).astype(np.float64), o)
        np.testing.assert_allclose(got[k], ref, atol=2e-5)
    assert "WARNING" in err and "Empty feature matrix for utterance b" in err
    # c's constant column floors its variance on every frame: two warnings, then one saying so
    assert err.count("Flooring when normalizing variance, floored 1 elements") == 2
    assert err.count("Suppressing the remaining variance flooring warnings") == 1
    assert "Applied sliding-window cepstral mean and variance normalization to 2 utterances, " \
        "1 had errors." in err
    for bad, msg in ((["--cmn-window=0"], "--cmn-window=0: expected a number of frames > 0"),
                     (["--center=true", "--min-cmn-window=700"], "--min-cmn-window=700")):
        assert tool.main(bad + [f"ark:{tmp_path}/in.ark", f"ark:{tmp_path}/x.ark"]) == 1
        (line,) = errors(capsys.readouterr().err)
        assert msg in line
        assert not (tmp_path / "x.ark").exists()
    write(f"ark:{tmp_path}/empty.ark", {"b": np.zeros((0, 3))})
    assert tool.main([f"ark:{tmp_path}/empty.ark", f"ark:{tmp_path}/y.ark"]) == 1


def test_compare_feats(tmp_path, capsys):
    x = np.array([[1.0, 3.0], [2.0, -1.0]])
    y = np.array([[2.0, 3.0], [2.0, -1.0]])
    write(f"ark:{tmp_path}/x.ark", {"u": x, "v": x})
    write(f"ark:{tmp_path}/y.ark", {"u": y, "v": x})
    tool = load_bin("compare-feats.py")
    assert tool.main([f"ark:{tmp_path}/x.ark", f"ark:{tmp_path}/x.ark"]) == 0
    assert "Features are considered similar since 1 >= 0.99" in capsys.readouterr().err
    # dim 0: cross 2+4 + 1+4 = 11, self 5 + 5, 8 + 5: 22 / 23; dim 1 identical
    assert tool.main([f"ark:{tmp_path}/x.ark", f"ark:{tmp_path}/y.ark"]) == 1
    err = capsys.readouterr().err
    assert "Similarity metric for each dimension  [ %.6g 1 ]" % (22 / 23) in err
    assert "Overall similarity for the two feats is:%.6g" % ((22 / 23 + 1) / 2) in err
    assert "dissimilar since" in err
    assert tool.main(["--threshold=0.97", f"ark:{tmp_path}/x.ark", f"ark:{tmp_path}/y.ark"]) == 0
    capsys.readouterr()
    write(f"ark:{tmp_path}/z.ark", {"u": np.zeros((2, 3)), "w": x})
    assert tool.main([f"ark:{tmp_path}/x.ark", f"ark:{tmp_path}/z.ark"]) == 1
    err = capsys.readouterr().err
    assert "Feature dimensions differ for utterance u, 2 vs. 3" in err
    assert "Second table has no feature for utterance v" in err
    assert "Processed 0 feature files, 2 had errors." in err
    (line,) = errors(err)  # Kaldi exits 1 with no error; nothing compared is one ERROR here
    assert f"ark:{tmp_path}/x.ark: none of its utterances is in ark:{tmp_path}/z.ark" in line
    write(f"ark:{tmp_path}/short.ark", {"u": x[:1]})
    assert tool.main([f"ark:{tmp_path}/x.ark", f"ark:{tmp_path}/short.ark"]) == 1
    (line,) = errors(capsys.readouterr().err)
    assert "utterance u has 2 frames in the first and 1 in the second" in line


def test_extract_feature_segments(tmp_path, capsys):
    feats = np.arange(100 * 2, dtype=np.float32).reshape(100, 2)
    write(f"ark,scp:{tmp_path}/f.ark,{tmp_path}/f.scp", {"u1": feats})
    (tmp_path / "segments").write_text(
        "s1 u1 0.10 0.50\n"      # frames 10 .. 50 less 2 snipped (ceil((25 - 10) / 10))
        "s2 u1 0.5 1.2\n"        # ends at 118 > 100: too far with --max-overshoot=0
        "s3 u1 0.2 0.3\n"        # 28 <= 20 + 10 frames: too short
        "s4 u9 0 1\n"            # no such utterance
        "s5 u1 0.005 0.5\n"      # 0.5 frames rounds away from zero (C's round): frame 1
        "s6 u1 0.5\n"            # bad line
        "s7 u1 0.5 -1\n")        # -1 is extract-segments' 'to the end', not taken here
    tool = load_bin("extract-feature-segments.py")
    assert tool.main([f"scp:{tmp_path}/f.scp", str(tmp_path / "segments"),
                      f"ark:{tmp_path}/out.ark"]) == 0
    err = capsys.readouterr().err
    got = read(f"ark:{tmp_path}/out.ark")
    assert list(got) == ["s1", "s5"]
    np.testing.assert_array_equal(got["s1"], feats[10:48])
    np.testing.assert_array_equal(got["s5"], feats[1:48])
    for msg in ("End sample too far out of range 118 [length:] 100x2, skipping segment s2",
                "Segment s3 too short, skipping it.",
                "Did not find features for utterance u9, skipping segment s4",
                "Invalid line in segments file: s6 u1 0.5",
                "Invalid line in segments file [empty or invalid segment]: s7 u1 0.5 -1",
                "Successfully processed 2 lines out of 7 in the segments file."):
        assert msg in err, msg
    assert tool.main(["--snip-edges=false", "--max-overshoot=0.5", f"scp:{tmp_path}/f.scp",
                      str(tmp_path / "segments"), f"ark:{tmp_path}/o2.ark"]) == 0
    got = read(f"ark:{tmp_path}/o2.ark")
    assert list(got) == ["s1", "s2", "s5"]
    np.testing.assert_array_equal(got["s1"], feats[10:50])
    np.testing.assert_array_equal(got["s2"], feats[50:100])
    capsys.readouterr()
    (tmp_path / "none").write_text("s4 u9 0 1\n")
    assert tool.main([f"scp:{tmp_path}/f.scp", str(tmp_path / "none"),
                      f"ark:{tmp_path}/o3.ark"]) == 1
    (line,) = errors(capsys.readouterr().err)
    assert "none of its 1 lines is a segment" in line
    assert not (tmp_path / "o3.ark").exists()


def test_wav_copy(tmp_path, capsys):
    """Kaldi's wav-copy: an scp of WAV files (and pipes) becomes one archive of wave objects
    holding the bytes Kaldi's WaveData::Write gives the same samples (encode_wave, checked in
    tests/feat/test_feat_segments.py); an unreadable entry stops it, leaving no archive."""
    from helpers import write_wav

    from nnetmix.feat import iter_wave_table
    from nnetmix.feat.riff import encode_wave
    from nnetmix.feat.wav import read_audio

    for i, (k, n) in enumerate([("a", 900), ("b", 1234)]):
        write_wav(tmp_path / f"{k}.wav", n, seed=i, rate=8000)
    (tmp_path / "wav.scp").write_text(f"a {tmp_path}/a.wav\nb cat {tmp_path}/b.wav |\n")
    tool = load_bin("wav-copy.py")
    assert tool.main([f"scp:{tmp_path}/wav.scp", f"ark,scp:{tmp_path}/w.ark,{tmp_path}/w.scp"]) == 0
    assert "Copied 2 wave files" in capsys.readouterr().err
    want = b"".join(k.encode() + b" " + encode_wave(read_audio(str(tmp_path / f"{k}.wav")),
                                                    k)[0] for k in "ab")
    assert (tmp_path / "w.ark").read_bytes() == want
    got = {e.key: e.load().samples for e in iter_wave_table(f"scp:{tmp_path}/w.scp")}
    assert list(got) == ["a", "b"]
    np.testing.assert_array_equal(got["b"], read_audio(str(tmp_path / "b.wav")).samples)
    (tmp_path / "bad.scp").write_text(f"a {tmp_path}/a.wav\nc {tmp_path}/missing.wav\n")
    assert tool.main([f"scp:{tmp_path}/bad.scp", f"ark:{tmp_path}/x.ark"]) == 1
    (line,) = errors(capsys.readouterr().err)
    assert f"scp:{tmp_path}/bad.scp: recording c" in line
    assert not (tmp_path / "x.ark").exists()
