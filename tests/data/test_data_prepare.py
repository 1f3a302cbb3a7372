"""nnetmix.data.prepare: a data directory written whole or not at all, and the wav check."""
import os

import pytest

from nnetmix.data import Utterance, check_wav, data_dir_tables, write_data_dir
from nnetmix.errors import DataDirError

from helpers import read_lines, write_wav


def utts(tmp_path, names=("b_2", "a_10", "a_1")):
    return [Utterance(n, tmp_path / f"{n}.wav", f"WORD {n}", n.split("_")[0]) for n in names]


def test_tables_are_c_sorted_with_absolute_paths(tmp_path):
    t = data_dir_tables(utts(tmp_path))
    assert [x.split()[0] for x in t["text"]] == ["a_1", "a_10", "b_2"]
    assert t["wav.scp"][0] == f"a_1 {(tmp_path / 'a_1.wav').resolve()}"
    assert t["utt2spk"] == ["a_1 a", "a_10 a", "b_2 b"]
    assert t["spk2utt"] == ["a a_1 a_10", "b b_2"]


def test_unchanged_is_kept_and_changed_replaced_whole(tmp_path):
    out = tmp_path / "data" / "train"
    assert write_data_dir(utts(tmp_path), out)
    (out / "feats.scp").write_text("kept\n")
    assert not write_data_dir(utts(tmp_path), out)
    assert (out / "feats.scp").read_text() == "kept\n"
    assert write_data_dir(utts(tmp_path, ("c_1",)), out)
    assert sorted(os.listdir(out)) == ["spk2utt", "text", "utt2spk", "wav.scp"]
    assert read_lines(out / "text") == ["c_1 WORD c_1"]
    assert os.listdir(tmp_path / "data") == ["train"]          # no temporary left


def test_check_wav(tmp_path):
    write_wav(tmp_path / "ok.wav", num_samples=80, rate=8000)
    check_wav(tmp_path / "ok.wav", 8000, "corpus", "the archive")
    with pytest.raises(DataDirError, match=r"ok.wav: 8000 Hz, 1 channel\(s\); corpus is 16000 Hz "
                                           r"mono \(replace it from the archive\)"):
        check_wav(tmp_path / "ok.wav", 16000, "corpus", "the archive")
    (tmp_path / "bad.wav").write_bytes(b"RIFF")

    class Mine(DataDirError):
        pass

    with pytest.raises(Mine, match="bad.wav: not a readable wav file"):
        check_wav(tmp_path / "bad.wav", 8000, "corpus", "the archive", Mine)


def test_check_flac_decodes_every_sample(tmp_path):
    """A FLAC cut in half keeps a good header: only decoding it to the end finds the damage."""
    import numpy as np
    import soundfile
    x = (np.random.default_rng(0).standard_normal(16000) * 3000).astype(np.int16)
    f = tmp_path / "cut.flac"
    soundfile.write(str(f), x, 16000, format="FLAC", subtype="PCM_16")
    check_wav(f, 16000, "corpus", "the archive", kind="FLAC", decode=True)
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    check_wav(f, 16000, "corpus", "the archive", kind="FLAC")          # the header alone: fine
    with pytest.raises(DataDirError, match=r"cut.flac: not a readable FLAC file \(.*lost sync"):
        check_wav(f, 16000, "corpus", "the archive", kind="FLAC", decode=True)


def test_spk2gender_is_written_per_speaker(tmp_path):
    out = tmp_path / "train"
    assert write_data_dir(utts(tmp_path), out, spk2gender={"a": "f", "b": "m", "z": "m"})
    assert read_lines(out / "spk2gender") == ["a f", "b m"]
    assert not write_data_dir(utts(tmp_path), out, spk2gender={"a": "f", "b": "m"})
