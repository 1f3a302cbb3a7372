"""MFCC/fbank equal kaldi-native-fbank's for the same Kaldi options, on Kaldi's sample scale."""
import kaldi_native_fbank as knf
import numpy as np
import pytest
import soundfile as sf
from helpers import dummy_samples, write_wav

from nnetmix.feat import (Extractor, FbankOptions, FeatureConfig, SampleRateError, TooShortError,
                          read_audio, read_feature_config)


def knf_direct(kind: str, samples: np.ndarray, **knf_opts) -> np.ndarray:
    """Reference: knf configured by its own option names, written independently of options.py."""
    o = knf.MfccOptions() if kind == "mfcc" else knf.FbankOptions()
    o.frame_opts.dither = 0.0
    o.mel_opts.num_bins = 23
    for name, value in knf_opts.items():
        target = o
        if name in ("samp_freq", "frame_shift_ms", "frame_length_ms", "preemph_coeff",
                    "remove_dc_offset", "window_type", "snip_edges", "round_to_power_of_two",
                    "blackman_coeff"):
            target = o.frame_opts
        elif name in ("num_bins", "low_freq", "high_freq"):
            target = o.mel_opts
        setattr(target, name, value)
    comp = (knf.OnlineMfcc if kind == "mfcc" else knf.OnlineFbank)(o)
    comp.accept_waveform(o.frame_opts.samp_freq, samples.astype(np.float32))
    comp.input_finished()
    return np.stack([comp.get_frame(i) for i in range(comp.num_frames_ready)])


CASES = [
    ("mfcc", [], {}),
    ("mfcc", ["--use-energy=false"], {"use_energy": False}),
    ("mfcc", ["--num-ceps=20", "--num-mel-bins=30", "--cepstral-lifter=0",
              "--window-type=hamming", "--preemphasis-coefficient=0.9"],
     {"num_ceps": 20, "num_bins": 30, "cepstral_lifter": 0.0, "window_type": "hamming",
      "preemph_coeff": 0.9}),
    ("mfcc", ["--snip-edges=false", "--low-freq=60", "--high-freq=-400", "--raw-energy=false",
              "--energy-floor=1.0", "--remove-dc-offset=false"],
     {"snip_edges": False, "low_freq": 60.0, "high_freq": -400.0, "raw_energy": False,
      "energy_floor": 1.0, "remove_dc_offset": False}),
    ("mfcc", ["--frame-shift=12.5", "--frame-length=30", "--htk-compat=true"],
     {"frame_shift_ms": 12.5, "frame_length_ms": 30.0, "htk_compat": True}),
    ("fbank", ["--num-mel-bins=40"], {"num_bins": 40}),
    ("fbank", ["--use-energy=true", "--use-log-fbank=false", "--use-power=false"],
     {"use_energy": True, "use_log_fbank": False, "use_power": False}),
    ("fbank", ["--sample-frequency=8000", "--window-type=blackman", "--round-to-power-of-two=false"],
     {"samp_freq": 8000.0, "window_type": "blackman", "round_to_power_of_two": False}),
]


@pytest.mark.parametrize("kind,argv,knf_opts", CASES)
def test_features_equal_knf(kind, argv, knf_opts):
    x = dummy_samples(7321, seed=3).astype(np.float32)
    config = read_feature_config(kind, overrides=["--dither=0", *argv])
    ours = Extractor(config).compute(x, config.frame.sample_frequency)
    ref = knf_direct(kind, x, **knf_opts)
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("n", [400, 401, 559, 560, 16000, 16159, 16160])
def test_frame_count_snip_edges(n):
    config = read_feature_config("mfcc", overrides=["--dither=0"])
    feats = Extractor(config).compute(dummy_samples(n).astype(np.float32), 16000)
    assert feats.shape == (1 + (n - 400) // 160, 13)


def test_kaldi_defaults():
    c = FeatureConfig("mfcc")
    assert c.frame.dither == 1.0 and c.mel.num_mel_bins == 23 and c.feat.use_energy
    assert c.feat.num_ceps == 13 and c.feat.cepstral_lifter == 22.0 and c.mel.low_freq == 20.0
    assert c.frame.window_type == "povey" and c.frame.preemphasis_coefficient == 0.97
    f = FeatureConfig("fbank", feat=FbankOptions())
    assert not f.feat.use_energy and f.feat.use_log_fbank and f.feat.use_power
    assert Extractor(f).dim == 23


def test_wav_read_on_kaldi_int16_scale(tmp_path):
    """Kaldi feeds raw int16 values: the file's features equal knf on int16 values, not [-1, 1]."""
    data = write_wav(tmp_path / "a.wav", 6000, seed=5)
    audio = read_audio(str(tmp_path / "a.wav"))
    assert audio.sample_rate == 16000 and audio.samples.shape == (1, 6000)
    np.testing.assert_array_equal(audio.samples[0], data.astype(np.float32))
    config = read_feature_config("mfcc", overrides=["--dither=0"])
    ours = Extractor(config).compute(audio.samples[0], audio.sample_rate)
    np.testing.assert_allclose(ours, knf_direct("mfcc", data.astype(np.float32)), rtol=1e-6,
                               atol=1e-5)
    unit, _ = sf.read(str(tmp_path / "a.wav"), dtype="float32")
    wrong = knf_direct("mfcc", unit)
    assert np.abs(ours[:, 0] - wrong[:, 0]).min() > 10  # energy differs by log(32768^2) ~ 20.8


def test_pipe_entry_and_8bit_scale(tmp_path):
    data = write_wav(tmp_path / "a.wav", 3000, seed=1)
    audio = read_audio(f"cat {tmp_path / 'a.wav'} |")
    np.testing.assert_array_equal(audio.samples[0], data.astype(np.float32))
    sf.write(str(tmp_path / "u8.wav"), data.astype(np.float32) / 32768, 16000, subtype="PCM_U8")
    u8 = read_audio(str(tmp_path / "u8.wav")).samples[0]
    assert np.abs(u8).max() <= 128 and np.all(u8 == np.round(u8))


def test_sample_rate_mismatch_names_both_rates():
    config = read_feature_config("mfcc", overrides=["--dither=0"])
    with pytest.raises(SampleRateError, match=r"utt7.*16000.*8000"):
        Extractor(config).compute(np.zeros(8000, np.float32), 8000, key="utt7")


def test_too_short_names_key():
    config = read_feature_config("mfcc", overrides=["--dither=0"])
    with pytest.raises(TooShortError, match="utt3 is too short: 399 samples"):
        Extractor(config).compute(np.ones(399, np.float32), 16000, key="utt3")
