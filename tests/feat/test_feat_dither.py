"""--dither is seeded per utterance: an utterance's features do not depend on the job it is in,
and digital silence (exact zeros) does not give identical feature vectors (issue 17: the digits
tri1 loss came from those)."""
from __future__ import annotations

import subprocess
import sys
import zlib

import numpy as np
import pytest
import soundfile as sf
from helpers import ROOT, script_env, write_wav

from nnetmix.feat import Extractor, read_feature_config
from nnetmix.feat.compute import dither_seed
from nnetmix.kaldi import SequentialReader


def _features(tmp_path, tool: str, keys: list[str], dither: float, name: str) -> dict:
    scp = tmp_path / f"{name}.scp"
    scp.write_text("".join(f"{k} {tmp_path / (k + '.wav')}\n" for k in keys))
    ark = tmp_path / f"{name}.ark"
    subprocess.run([sys.executable, str(ROOT / "bin" / f"compute-{tool}-feats.py"),
                    f"--dither={dither}", f"scp:{scp}", f"ark:{ark}"],
                   env=script_env(), check=True, capture_output=True)
    with SequentialReader(f"ark:{ark}", "mat") as r:
        return {k: np.array(m) for k, m in r}


@pytest.mark.parametrize("tool", ["mfcc", "fbank", "plp"])
def test_dither_does_not_depend_on_the_other_utterances_of_the_job(tmp_path, tool):
    for i, k in enumerate(["a", "b", "c"]):
        write_wav(tmp_path / f"{k}.wav", 6000, seed=i)
    alone = _features(tmp_path, tool, ["c"], 1.0, "alone")
    after = _features(tmp_path, tool, ["a", "b", "c"], 1.0, "after")
    np.testing.assert_array_equal(alone["c"], after["c"])  # knf's rand() made these differ
    plain = _features(tmp_path, tool, ["c"], 0.0, "plain")
    assert not np.array_equal(alone["c"], plain["c"])


def test_dither_breaks_up_digital_silence(tmp_path):
    speech = write_wav(tmp_path / "s.wav", 4000, seed=1)
    sf.write(str(tmp_path / "z.wav"), np.concatenate([speech, np.zeros(8000, np.int16)]), 16000,
             subtype="PCM_16")
    for dither, repeats in [(0.0, True), (1.0, False)]:
        feats = _features(tmp_path, "mfcc", ["z"], dither, f"z{dither}")["z"]
        tail = feats[-30:]
        assert bool(np.all(tail[1:] == tail[:-1])) is repeats, dither


def test_dither_seed_is_the_key_crc():
    assert dither_seed("utt1") == zlib.crc32(b"utt1")  # not hash(): stable across processes
    e = Extractor(read_feature_config("mfcc", overrides=["--dither=1"]))
    x = np.zeros(4000, np.float32)
    assert np.array_equal(e.compute(x, key="u1"), e.compute(x, key="u1"))
    assert not np.array_equal(e.compute(x, key="u1"), e.compute(x, key="u2"))
