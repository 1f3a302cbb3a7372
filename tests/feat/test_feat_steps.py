"""steps/make_mfcc.sh, make_fbank.sh, make_plp.sh (and *_pitch.sh) and compute_cmvn_stats.sh end to end
on a 4-utterance data dir."""
import os

import numpy as np
import pytest
from helpers import ROOT, make_wav_data_dir, run_script

from nnetmix.feat import Extractor, acc_cmvn_stats, read_audio, read_feature_config
from nnetmix.kaldi import SequentialReader
from nnetmix.kaldi.compressed import compress_matrix, decompress

NEEDED = ["utils/run.py", "utils/parse_options.sh", "utils/split_data.sh",
          "utils/validate_data_dir.sh"]
pytestmark = pytest.mark.skipif(not all((ROOT / f).exists() for f in NEEDED),
                                reason="utils/ job and data-dir scripts not present")

UTTS = {"s1-a": ("s1", 4000), "s1-b": ("s1", 5000), "s2-a": ("s2", 6000), "s2-b": ("s2", 3000)}


@pytest.fixture
def recipe(tmp_path):
    """A recipe directory: steps, utils, conf linked to the toolkit's, plus data/train."""
    for d in ("steps", "utils", "conf"):
        os.symlink(ROOT / d, tmp_path / d)
    make_wav_data_dir(tmp_path, UTTS)
    return tmp_path


def read(rspec):
    with SequentialReader(rspec, "mat") as r:
        return {k: np.array(v) for k, v in r}


def test_make_mfcc_and_cmvn(recipe):
    p = run_script(["steps/make_mfcc.sh", "--nj", "2", "data/train", "exp/make_mfcc/train", "mfcc"],
                   cwd=recipe, check=True)
    assert "done, mfcc features for 4 utterances" in p.stdout
    data = recipe / "data" / "train"
    feats = read(f"scp:{data / 'feats.scp'}")
    assert list(feats) == sorted(UTTS)
    frames = {k: 1 + (n - 400) // 160 for k, (_, n) in UTTS.items()}
    assert {k: v.shape for k, v in feats.items()} == {k: (f, 13) for k, f in frames.items()}
    assert (data / "utt2num_frames").read_text() == "".join(f"{k} {frames[k]}\n" for k in sorted(UTTS))
    assert (data / "frame_shift").read_text() == "0.010\n"
    assert (recipe / "exp/make_mfcc/train/make_mfcc_train.2.log").exists()
    assert (recipe / "mfcc/raw_mfcc_train.1.ark").exists()

    p = run_script(["steps/compute_cmvn_stats.sh", "data/train", "exp/make_mfcc/train", "mfcc"],
                   cwd=recipe, check=True)
    stats = read(f"scp:{data / 'cmvn.scp'}")
    assert list(stats) == ["s1", "s2"]
    np.testing.assert_allclose(stats["s2"], acc_cmvn_stats(np.concatenate(
        [feats["s2-a"], feats["s2-b"]])), rtol=1e-12)
    assert (recipe / "mfcc/cmvn_train.ark").exists()

    for script in (["steps/make_mfcc.sh", "--nj", "2", "data/train", "exp/make_mfcc/train", "mfcc"],
                   ["steps/compute_cmvn_stats.sh", "data/train", "exp/make_mfcc/train", "mfcc"]):
        p = run_script(script, cwd=recipe, check=True)
        assert "skipping" in p.stdout


def test_make_fbank(recipe):
    run_script(["steps/make_fbank.sh", "--nj", "1", "data/train"], cwd=recipe, check=True)
    feats = read(f"scp:{recipe / 'data/train/feats.scp'}")
    assert feats["s1-b"].shape == (29, 40)
    assert (recipe / "data/train/data/raw_fbank_train.1.ark").exists()


def test_make_mfcc_compress(recipe):
    """--compress true (Kaldi's default): the archives hold CM matrices, the features as
    copy-feats --compress=true makes them from the uncompressed ones, utt2num_frames as before."""
    run_script(["steps/make_mfcc.sh", "--nj", "2", "--compress", "true", "data/train"],
               cwd=recipe, check=True)
    data = recipe / "data" / "train"
    feats = read(f"scp:{data / 'feats.scp'}")
    assert (data / "data/raw_mfcc_train.1.ark").read_bytes().startswith(b"s1-a \0BCM ")
    extractor = Extractor(read_feature_config("mfcc", ROOT / "conf" / "mfcc.conf"))
    audio = read_audio(str(recipe / "wav" / "s2-a.wav"))
    full = extractor.compute(audio.samples[0], 16000)
    np.testing.assert_array_equal(feats["s2-a"], decompress(compress_matrix(full)))
    assert (data / "utt2num_frames").read_text().splitlines()[2] == f"s2-a {len(full)}"
    assert (data / "conf" / "compress.conf").read_text() == "--compress=true\n"
    # a rerun asking for the other kind recomputes; the same kind again skips
    for compress, skips, head in (("true", True, b"s1-a \0BCM "), ("false", False, b"s1-a \0BFM "),
                                  ("false", True, b"s1-a \0BFM "), ("true", False, b"s1-a \0BCM ")):
        p = run_script(["steps/make_mfcc.sh", "--nj", "2", "--compress", compress, "data/train"],
                       cwd=recipe, check=True)
        assert ("utterances, skipping" in p.stdout) == skips, (compress, p.stdout)
        assert (data / "data/raw_mfcc_train.1.ark").read_bytes().startswith(head)
        assert (data / "conf" / "compress.conf").exists() == (compress == "true")


def test_less_than_95_percent_fails(recipe):
    (recipe / "wav" / "s2-b.wav").unlink()
    p = run_script(["steps/make_mfcc.sh", "--nj", "1", "data/train", "exp/log", "mfcc"], cwd=recipe)
    assert p.returncode == 1
    assert "less than 95%" in p.stderr and "(3 of 4)" in p.stderr
    log = (recipe / "exp/log/make_mfcc_train.1.log").read_text()
    assert "WARNING" in log and "s2-b" in log and "Done 3 out of 4 utterances." in log


def test_rerun_after_the_input_is_fixed(recipe):
    """A stage stopped by a missing wav (features for 3 of 4) reruns once the wav is back, as
    Kaldi's does: the partial feats.scp and its lists are moved to data/train/.backup."""
    wav = recipe / "wav" / "s2-b.wav"
    wav.rename(recipe / "s2-b.wav")
    cmd = ["steps/make_mfcc.sh", "--nj", "1", "data/train", "exp/log", "mfcc"]
    assert run_script(cmd, cwd=recipe).returncode == 1
    assert len((recipe / "data/train/feats.scp").read_text().splitlines()) == 3
    (recipe / "s2-b.wav").rename(wav)
    p = run_script(cmd, cwd=recipe)
    assert p.returncode == 0, p.stderr
    assert "moving feats.scp utt2num_frames utt2dur of data/train to data/train/.backup" in p.stdout
    assert len((recipe / "data/train/feats.scp").read_text().splitlines()) == 4
    assert len((recipe / "data/train/.backup/feats.scp").read_text().splitlines()) == 3
    assert sorted(read("scp:" + str(recipe / "data/train/feats.scp"))) == sorted(UTTS)


def test_usage_and_missing_input(recipe):
    p = run_script(["steps/make_mfcc.sh"], cwd=recipe)
    assert p.returncode == 1 and "Usage: steps/make_mfcc.sh [options] <data-dir>" in p.stderr
    p = run_script(["steps/make_mfcc.sh", "data/nope"], cwd=recipe)
    assert p.returncode == 1 and "no such file data/nope/wav.scp" in p.stderr
    p = run_script(["steps/compute_cmvn_stats.sh", "data/train"], cwd=recipe)
    assert p.returncode == 1 and "no such file data/train/feats.scp" in p.stderr


def test_make_mfcc_pitch(recipe):
    """MFCC with Kaldi pitch pasted after them (steps/make_mfcc_pitch.sh): 13 + 3 dims, frame
    counts and durations of the pasted features."""
    p = run_script(["steps/make_mfcc_pitch.sh", "--nj", "2", "data/train", "exp/make_mfcc/train",
                    "mfcc"], cwd=recipe, check=True)
    assert "done, mfcc_pitch features for 4 utterances" in p.stdout
    data = recipe / "data" / "train"
    feats = read(f"scp:{data / 'feats.scp'}")
    frames = {k: 1 + (n - 400) // 160 for k, (_, n) in UTTS.items()}
    assert {k: v.shape[1] for k, v in feats.items()} == {k: 16 for k in UTTS}
    assert all(0 <= frames[k] - v.shape[0] <= 2 for k, v in feats.items())
    assert (data / "utt2num_frames").read_text() == "".join(
        f"{k} {feats[k].shape[0]}\n" for k in sorted(UTTS))
    durs = dict(line.split() for line in (data / "utt2dur").read_text().splitlines())
    assert {k: float(v) for k, v in durs.items()} == {k: n / 16000 for k, (_, n) in UTTS.items()}
    assert (data / "conf" / "pitch.conf").exists()
    assert np.isfinite(np.concatenate(list(feats.values()))).all()


def test_make_mfcc_pitch_with_segments(recipe):
    """With a segments file each job cuts the utterances out of the recordings for both the
    MFCC and the pitch pipe."""
    data = recipe / "data" / "train"
    recs = {k: n for k, (_, n) in UTTS.items() if n >= 4000}  # halves over Kaldi's 0.1 s minimum
    segs = {f"{r}-{i}": (r, i * n / 32000, (i + 1) * n / 32000) for r, n in recs.items()
            for i in range(2)}
    (data / "segments").write_text("".join(f"{s} {r} {b:.4f} {e:.4f}\n"
                                           for s, (r, b, e) in sorted(segs.items())))
    (data / "utt2spk").write_text("".join(f"{s} {UTTS[r][0]}\n"
                                          for s, (r, _, _) in sorted(segs.items())))
    (data / "text").write_text("".join(f"{s} ONE\n" for s in sorted(segs)))
    wav = (data / "wav.scp").read_text().splitlines()
    (data / "wav.scp").write_text("".join(ln + "\n" for ln in wav if ln.split()[0] in recs))
    spk = {}
    for s, (r, _, _) in sorted(segs.items()):
        spk.setdefault(UTTS[r][0], []).append(s)
    (data / "spk2utt").write_text("".join(f"{k} {' '.join(v)}\n" for k, v in sorted(spk.items())))
    run_script(["steps/make_mfcc_pitch.sh", "--nj", "2", "data/train", "exp/make_mfcc/train",
                "mfcc"], cwd=recipe, check=True)
    feats = read(f"scp:{data / 'feats.scp'}")
    assert sorted(feats) == sorted(segs) and {v.shape[1] for v in feats.values()} == {16}


def test_make_plp_and_plp_pitch(recipe):
    """steps/make_plp.sh: 13 PLP dims equal to compute-plp-feats' library call; make_plp_pitch.sh
    on the same directory recomputes (another feature type) with 13 + 3 dims whose first 13 are
    the PLP; going back to make_plp.sh recomputes again, and a repeat skips."""
    data = recipe / "data" / "train"
    frames = {k: 1 + (n - 400) // 160 for k, (_, n) in UTTS.items()}
    p = run_script(["steps/make_plp.sh", "--nj", "2", "data/train", "exp/make_plp/train", "plp"],
                   cwd=recipe, check=True)
    assert "done, plp features for 4 utterances" in p.stdout
    plp = read(f"scp:{data / 'feats.scp'}")
    assert {k: v.shape for k, v in plp.items()} == {k: (f, 13) for k, f in frames.items()}
    assert (data / "utt2num_frames").read_text() == "".join(f"{k} {frames[k]}\n" for k in sorted(UTTS))
    assert (recipe / "plp/raw_plp_train.2.ark").exists() and (data / "conf/plp.conf").exists()
    extractor = Extractor(read_feature_config("plp", ROOT / "conf" / "plp.conf"))
    audio = read_audio(str(recipe / "wav" / "s2-a.wav"))
    np.testing.assert_array_equal(plp["s2-a"], extractor.compute(audio.samples[0], 16000))

    p = run_script(["steps/make_plp_pitch.sh", "--nj", "2", "data/train", "exp/make_plp/train",
                    "plp"], cwd=recipe, check=True)
    assert "done, plp_pitch features for 4 utterances" in p.stdout
    pitched = read(f"scp:{data / 'feats.scp'}")
    assert {v.shape[1] for v in pitched.values()} == {16}
    assert all(0 <= frames[k] - v.shape[0] <= 2 for k, v in pitched.items())
    for k, v in pitched.items():
        np.testing.assert_array_equal(v[:, :13], plp[k][:len(v)])
    assert (data / "utt2num_frames").read_text() == "".join(
        f"{k} {pitched[k].shape[0]}\n" for k in sorted(UTTS))
    assert sorted(p.name for p in (data / "conf").iterdir()) == ["pitch.conf", "plp.conf"]

    p = run_script(["steps/make_plp.sh", "--nj", "1", "data/train"], cwd=recipe, check=True)
    assert "skipping" not in p.stdout
    assert {v.shape[1] for v in read(f"scp:{data / 'feats.scp'}").values()} == {13}
    assert sorted(p.name for p in (data / "conf").iterdir()) == ["plp.conf"]
    p = run_script(["steps/make_plp.sh", "--nj", "1", "data/train"], cwd=recipe, check=True)
    assert "skipping" in p.stdout
