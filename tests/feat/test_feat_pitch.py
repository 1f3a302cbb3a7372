"""compute-and-process-kaldi-pitch-feats against kaldi-native-fbank called directly with the
same (non-default) options, on real recorded speech; paste-feats after MFCC."""
import numpy as np
import pytest
import soundfile as sf
from helpers import ROOT, load_bin

import kaldi_native_fbank as knf
from nnetmix.kaldi import SequentialReader, TableWriter

FSDD = ROOT.parent / "shared" / "corpora" / "fsdd" / "recordings"
pytestmark = pytest.mark.skipif(not FSDD.is_dir(), reason=f"no FSDD recordings at {FSDD}")
WAVS = ["0_george_0.wav", "7_jackson_3.wav"]


@pytest.fixture(scope="module")
def wav_scp(tmp_path_factory):
    d = tmp_path_factory.mktemp("pitch")
    (d / "wav.scp").write_text("".join(f"{w[:-4]} {FSDD / w}\n" for w in WAVS))
    return d


def _samples(name):
    x, rate = sf.read(str(FSDD / name), dtype="int16")
    assert rate == 8000
    return x.astype(np.float32)


def test_processed_pitch_equals_knf_and_pastes_onto_mfcc(wav_scp, tmp_path, capsys):
    assert load_bin("compute-and-process-kaldi-pitch-feats.py").main([
        "--sample-frequency=8000", "--pitch-scale=1.5", "--add-raw-log-pitch=true",
        f"scp:{wav_scp / 'wav.scp'}", f"ark:{tmp_path / 'pitch.ark'}"]) == 0
    got = dict(SequentialReader(f"ark:{tmp_path / 'pitch.ark'}", "mat"))
    opts, proc = knf.PitchExtractionOptions(), knf.ProcessPitchOptions()
    opts.samp_freq, proc.pitch_scale, proc.add_raw_log_pitch = 8000, 1.5, True
    for name in WAVS:
        want = knf.compute_and_process_kaldi_pitch(opts, proc, _samples(name))
        np.testing.assert_array_equal(got[name[:-4]], want)
        assert want.shape[1] == 4
    assert load_bin("compute-mfcc-feats.py").main([
        "--sample-frequency=8000", "--dither=0", "--num-mel-bins=15", "--snip-edges=false",
        f"scp:{wav_scp / 'wav.scp'}", f"ark:{tmp_path / 'mfcc.ark'}"]) == 0
    mfcc = dict(SequentialReader(f"ark:{tmp_path / 'mfcc.ark'}", "mat"))
    assert load_bin("paste-feats.py").main([
        "--length-tolerance=2", f"ark:{tmp_path / 'mfcc.ark'}", f"ark:{tmp_path / 'pitch.ark'}",
        f"ark:{tmp_path / 'both.ark'}"]) == 0
    both = dict(SequentialReader(f"ark:{tmp_path / 'both.ark'}", "mat"))
    for k, m in mfcc.items():
        n = min(m.shape[0], got[k].shape[0])
        np.testing.assert_array_equal(both[k], np.hstack([m[:n], got[k][:n]]))
    with TableWriter(f"ark:{tmp_path / 'short.ark'}", "mat") as w:
        for k, m in mfcc.items():
            w.write(k, m[:-5])
    capsys.readouterr()
    assert load_bin("paste-feats.py").main([
        "--length-tolerance=2", f"ark:{tmp_path / 'short.ark'}", f"ark:{tmp_path / 'pitch.ark'}",
        f"ark:{tmp_path / 'none.ark'}"]) != 0
    err = capsys.readouterr().err
    assert "exceeds tolerance 2" in err and "Done 0 utts, errors on 2" in err
