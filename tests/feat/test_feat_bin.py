"""The feature bin/ tools, called through main(argv) on tiny wavs and arks built in tmp_path."""
from pathlib import Path

import kaldiio
import numpy as np
import pytest
from helpers import dummy_feats, load_bin, write_wav

from nnetmix.feat import (Extractor, acc_cmvn_stats, add_deltas, apply_cmvn, read_audio,
                          read_feature_config, splice_frames)
from nnetmix.kaldi import SequentialReader, TableWriter, read_object

ROOT = Path(__file__).resolve().parents[2]
MFCC_CONF = ROOT / "conf" / "mfcc.conf"


def run(tool, argv, capsys):
    rc = load_bin(tool).main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


def read_table(rspec):
    return {k: np.array(v) for k, v in SequentialReader(rspec, "mat")}


def wav_scp(tmp_path, entries):
    p = tmp_path / "wav.scp"
    p.write_text("".join(f"{k} {v}\n" for k, v in entries))
    return p


def test_compute_mfcc_feats(tmp_path, capsys):
    entries = []
    for i, n in enumerate([4000, 5600, 16000]):
        write_wav(tmp_path / f"u{i}.wav", n, seed=i)
        entries.append((f"u{i}", tmp_path / f"u{i}.wav"))
    entries.append(("u3", f"cat {tmp_path / 'u0.wav'} |"))
    scp = wav_scp(tmp_path, entries)
    ark, fscp = tmp_path / "raw.ark", tmp_path / "raw.scp"
    rc, _, err = run("compute-mfcc-feats.py",
                     [f"--config={MFCC_CONF}", "--write-num-frames=ark,t:" + str(tmp_path / "n"),
                      "--write-utt2dur=ark,t:" + str(tmp_path / "d"), f"scp:{scp}",
                      f"ark,scp:{ark},{fscp}"], capsys)
    assert rc == 0, err
    assert "Done 4 out of 4 utterances." in err
    feats = read_table(f"scp:{fscp}")
    assert list(feats) == ["u0", "u1", "u2", "u3"]
    extractor = Extractor(read_feature_config("mfcc", MFCC_CONF))
    for key, n in zip(feats, [4000, 5600, 16000, 4000]):
        assert feats[key].shape == (1 + (n - 400) // 160, 13)
    audio = read_audio(str(tmp_path / "u1.wav"))
    np.testing.assert_array_equal(feats["u1"], extractor.compute(audio.samples[0], 16000))
    np.testing.assert_array_equal(feats["u3"], feats["u0"])
    assert (tmp_path / "n").read_text().split("\n")[:2] == ["u0 23", "u1 33"]
    assert (tmp_path / "d").read_text().startswith("u0 0.25\nu1 0.35\n")
    with kaldiio.ReadHelper(f"ark:{ark}") as r:  # an independent reader sees Kaldi FM matrices
        k, m = next(iter(r))
        assert k == "u0" and m.dtype == np.float32


def test_compute_fbank_feats_config(tmp_path, capsys):
    write_wav(tmp_path / "a.wav", 3200)
    scp = wav_scp(tmp_path, [("a", tmp_path / "a.wav")])
    rc, _, err = run("compute-fbank-feats.py",
                     [f"--config={ROOT / 'conf' / 'fbank.conf'}", f"scp:{scp}",
                      f"ark:{tmp_path / 'f.ark'}"], capsys)
    assert rc == 0 and "Done 1 out of 1 utterances." in err
    assert read_table(f"ark:{tmp_path / 'f.ark'}")["a"].shape == (18, 40)


def test_bad_wav_entries_warn_and_count(tmp_path, capsys):
    write_wav(tmp_path / "good.wav", 4000)
    (tmp_path / "corrupt.wav").write_bytes(b"RIFF\x00\x01\x00\x00WAVEjunkjunkjunk" * 3)
    write_wav(tmp_path / "short.wav", 399)
    write_wav(tmp_path / "empty.wav", 0)
    scp = wav_scp(tmp_path, [("a_good", tmp_path / "good.wav"),
                             ("b_missing", tmp_path / "nope.wav"),
                             ("c_corrupt", tmp_path / "corrupt.wav"),
                             ("d_short", tmp_path / "short.wav"),
                             ("e_empty", tmp_path / "empty.wav"),
                             ("f_pipefail", "false |")])
    rc, _, err = run("compute-mfcc-feats.py", [f"--config={MFCC_CONF}", f"scp:{scp}",
                                               f"ark:{tmp_path / 'o.ark'}"], capsys)
    assert rc == 0
    warnings = [l for l in err.splitlines() if l.startswith("WARNING")]
    assert len(warnings) == 5
    for key in ("b_missing", "c_corrupt", "d_short", "e_empty", "f_pipefail"):
        assert sum(key in w for w in warnings) == 1, key
    assert "no such file" in err and "too short" in err
    assert "Done 1 out of 6 utterances." in err
    assert list(read_table(f"ark:{tmp_path / 'o.ark'}")) == ["a_good"]


def test_nothing_succeeded_exits_nonzero(tmp_path, capsys):
    scp = wav_scp(tmp_path, [("x", tmp_path / "missing1.wav"), ("y", tmp_path / "missing2.wav")])
    rc, _, err = run("compute-mfcc-feats.py", ["--dither=0", f"scp:{scp}",
                                               f"ark:{tmp_path / 'o.ark'}"], capsys)
    assert rc == 1 and "Done 0 out of 2 utterances." in err
    assert not (tmp_path / "o.ark").exists()   # no empty archive left for a later step


def test_sample_rate_mismatch_is_an_error(tmp_path, capsys):
    write_wav(tmp_path / "a.wav", 4000)
    write_wav(tmp_path / "b.wav", 4000, rate=8000)
    scp = wav_scp(tmp_path, [("a", tmp_path / "a.wav"), ("b8k", tmp_path / "b.wav")])
    rc, _, err = run("compute-mfcc-feats.py", [f"--config={MFCC_CONF}", f"scp:{scp}",
                                               f"ark:{tmp_path / 'o.ark'}"], capsys)
    errors = [l for l in err.splitlines() if l.startswith("ERROR")]
    assert rc == 1 and len(errors) == 1
    assert "b8k" in errors[0] and "16000" in errors[0] and "8000 Hz" in errors[0]
    assert not (tmp_path / "o.ark").exists()  # nothing half-written


def test_bad_config_and_usage(tmp_path, capsys):
    conf = tmp_path / "m.conf"
    conf.write_text("--dither=0\n--use-energy=flase\n")
    rc, _, err = run("compute-mfcc-feats.py", [f"--config={conf}", "scp:x", "ark:y"], capsys)
    assert rc == 1 and f"{conf}:2" in err and err.count("ERROR") == 1
    rc, _, err = run("compute-mfcc-feats.py", ["scp:x"], capsys)
    assert rc == 1 and "Usage:  compute-mfcc-feats.py" in err
    rc, out, _ = run("compute-mfcc-feats.py", ["--help"], capsys)
    assert rc == 0 and "--num-ceps" in out and "Dithering constant" in out


@pytest.fixture
def feats_ark(tmp_path):
    """Four utterances of 13-dim features by two speakers, in an ark with an scp."""
    utts = {f"s{s}_u{u}": dummy_feats(20 + 7 * u + s, 13, seed=10 * s + u)
            for s in (1, 2) for u in (1, 2)}
    ark, scp = tmp_path / "feats.ark", tmp_path / "feats.scp"
    with TableWriter(f"ark,scp:{ark},{scp}", "mat") as w:
        for k, v in utts.items():
            w.write(k, v)
    (tmp_path / "spk2utt").write_text("s1 s1_u1 s1_u2\ns2 s2_u1 s2_u2\n")
    (tmp_path / "utt2spk").write_text("".join(f"{u} {u[:2]}\n" for u in utts))
    return utts, scp


def test_cmvn_per_speaker_and_apply(tmp_path, capsys, feats_ark):
    utts, scp = feats_ark
    stats_w = f"ark,scp:{tmp_path / 'cmvn.ark'},{tmp_path / 'cmvn.scp'}"
    rc, _, err = run("compute-cmvn-stats.py", [f"--spk2utt=ark:{tmp_path / 'spk2utt'}",
                                               f"scp:{scp}", stats_w], capsys)
    assert rc == 0 and "Done accumulating CMVN stats for 4 utterances; 0 had errors." in err
    stats = read_table(f"scp:{tmp_path / 'cmvn.scp'}")
    assert list(stats) == ["s1", "s2"] and stats["s1"].shape == (2, 14)
    with kaldiio.ReadHelper(f"ark:{tmp_path / 'cmvn.ark'}") as r:
        assert next(iter(r))[1].dtype == np.float64  # DM, as Kaldi writes stats
    np.testing.assert_allclose(stats["s1"], acc_cmvn_stats(
        np.concatenate([utts["s1_u1"], utts["s1_u2"]])), rtol=1e-12)

    out = tmp_path / "norm.ark"
    rc, _, err = run("apply-cmvn.py", ["--norm-vars=true", f"--utt2spk=ark:{tmp_path / 'utt2spk'}",
                                       f"scp:{tmp_path / 'cmvn.scp'}", f"scp:{scp}",
                                       f"ark:{out}"], capsys)
    assert rc == 0
    assert "Applied cepstral mean and variance normalization to 4 utterances, errors on 0" in err
    normed = read_table(f"ark:{out}")
    both = np.concatenate([normed["s2_u1"], normed["s2_u2"]]).astype(np.float64)
    np.testing.assert_allclose(both.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(both.std(0), 1, atol=1e-5)


def test_cmvn_per_utt_global_and_missing(tmp_path, capsys, feats_ark):
    utts, scp = feats_ark
    rc, _, _ = run("compute-cmvn-stats.py", [f"scp:{scp}", f"ark:{tmp_path / 'u.ark'}"], capsys)
    assert rc == 0 and list(read_table(f"ark:{tmp_path / 'u.ark'}")) == list(utts)
    rc, _, err = run("compute-cmvn-stats.py", [f"scp:{scp}", tmp_path / "global.mat"], capsys)
    assert rc == 0 and "Wrote global CMVN stats" in err
    g = read_object(str(tmp_path / "global.mat"), "mat")
    assert g.shape == (2, 14) and g[0, 13] == sum(len(v) for v in utts.values())

    rc, _, err = run("apply-cmvn.py", [tmp_path / "global.mat", f"scp:{scp}",
                                       f"ark:{tmp_path / 'g.ark'}"], capsys)
    assert rc == 0 and "Applied cepstral mean normalization to 4 utterances, errors on 0" in err
    got = read_table(f"ark:{tmp_path / 'g.ark'}")
    np.testing.assert_allclose(got["s1_u2"], apply_cmvn(g, utts["s1_u2"]), rtol=1e-6)

    (tmp_path / "spk2utt2").write_text("s1 s1_u1 s1_zz\n")
    rc, _, err = run("compute-cmvn-stats.py", [f"--spk2utt=ark:{tmp_path / 'spk2utt2'}",
                                               f"scp:{scp}", f"ark:{tmp_path / 'p.ark'}"], capsys)
    assert rc == 0 and "s1_zz" in err and "1 had errors" in err
    rc, _, err = run("apply-cmvn.py", [f"--utt2spk=ark:{tmp_path / 'utt2spk'}",
                                       f"ark:{tmp_path / 'p.ark'}", f"scp:{scp}",
                                       f"ark:{tmp_path / 'q.ark'}"], capsys)
    assert rc == 0 and "to 2 utterances, errors on 2" in err
    assert "No normalization statistics available for key s2" in err


def test_deltas_splice_copy(tmp_path, capsys, feats_ark):
    utts, scp = feats_ark
    rc, _, _ = run("add-deltas.py", [f"scp:{scp}", f"ark:{tmp_path / 'd.ark'}"], capsys)
    assert rc == 0
    d = read_table(f"ark:{tmp_path / 'd.ark'}")
    np.testing.assert_array_equal(d["s2_u2"], add_deltas(utts["s2_u2"]))
    rc, _, _ = run("splice-feats.py", ["--left-context=2", "--right-context=1", f"scp:{scp}",
                                       f"ark:{tmp_path / 's.ark'}"], capsys)
    assert rc == 0
    s = read_table(f"ark:{tmp_path / 's.ark'}")
    np.testing.assert_array_equal(s["s1_u1"], splice_frames(utts["s1_u1"], 2, 1))
    rc, _, err = run("copy-feats.py", [f"--write-num-frames=ark,t:{tmp_path / 'n'}", f"scp:{scp}",
                                       f"ark,t:{tmp_path / 't.ark'}"], capsys)
    assert rc == 0 and "Copied 4 feature matrices." in err
    assert (tmp_path / "t.ark").read_text().startswith("s1_u1  [")
    assert (tmp_path / "n").read_text().splitlines()[0] == "s1_u1 28"
    t = read_table(f"ark:{tmp_path / 't.ark'}")
    np.testing.assert_allclose(t["s2_u1"], utts["s2_u1"], rtol=1e-6)
    rc, _, err = run("copy-feats.py", ["--compress=true", f"scp:{scp}",
                                       f"ark,scp:{tmp_path / 'c.ark'},{tmp_path / 'c.scp'}"], capsys)
    assert rc == 0 and (tmp_path / "c.ark").read_bytes()[:11] == b"s1_u1 \0BCM "
    c = read_table(f"scp:{tmp_path / 'c.scp'}")
    u = utts["s2_u1"]
    assert np.abs(c["s2_u1"] - u).max() < (u.max(0) - u.min(0)).max() / 100
    rc, _, err = run("copy-feats.py", ["--compress=true", tmp_path / "c.ark:6", tmp_path / "one"],
                     capsys)
    assert rc == 1 and "--compress=true writes tables only" in err


def test_feat_to_dim_and_len(tmp_path, capsys, feats_ark):
    utts, scp = feats_ark
    rc, out, _ = run("feat-to-dim.py", [f"scp:{scp}", "-"], capsys)
    assert rc == 0 and out == "13\n"
    rc, out, _ = run("feat-to-len.py", [f"scp:{scp}"], capsys)
    assert rc == 0 and out == f"{sum(len(v) for v in utts.values())}\n"
    rc, _, _ = run("feat-to-len.py", [f"scp:{scp}", f"ark,t:{tmp_path / 'len'}"], capsys)
    assert rc == 0
    assert (tmp_path / "len").read_text() == "".join(f"{k} {len(v)}\n" for k, v in utts.items())
    rc, _, err = run("feat-to-len.py", [f"scp:{tmp_path / 'nope.scp'}"], capsys)
    assert rc == 1 and err.count("ERROR") == 1
