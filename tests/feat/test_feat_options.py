"""Kaldi-syntax feature config files: Kaldi's option names, defaults, and errors naming file:line."""
from pathlib import Path

import pytest

from nnetmix.errors import UsageError
from nnetmix.feat import FeatureConfig, read_feature_config

ROOT = Path(__file__).resolve().parents[2]


def test_kaldi_conf_file(tmp_path):
    conf = tmp_path / "mfcc.conf"
    conf.write_text("# a Kaldi conf\n--use-energy=false   # C0\n--sample-frequency=8000\n"
                    "--num-ceps=20\n--num_mel_bins=30\n--dither=0.0\n--snip-edges=false\n"
                    "--low-freq=40\n--high-freq=-200\n--frame-shift=12\n--frame-length=30\n"
                    "--preemphasis-coefficient=0.95\n--remove-dc-offset=false\n"
                    "--window-type=hamming\n--energy-floor=0.5\n--raw-energy=false\n"
                    "--cepstral-lifter=0\n\n")
    c = read_feature_config("mfcc", conf, ["--num-ceps=19"])  # command line wins
    assert (c.frame.sample_frequency, c.frame.dither, c.frame.snip_edges) == (8000.0, 0.0, False)
    assert (c.feat.num_ceps, c.mel.num_mel_bins, c.feat.use_energy) == (19, 30, False)
    assert (c.mel.low_freq, c.mel.high_freq) == (40.0, -200.0)
    assert (c.frame.frame_shift, c.frame.frame_length) == (12.0, 30.0)
    assert c.frame.preemphasis_coefficient == 0.95 and not c.frame.remove_dc_offset
    assert c.frame.window_type == "hamming" and c.feat.energy_floor == 0.5
    assert not c.feat.raw_energy and c.feat.cepstral_lifter == 0.0
    k = c.to_knf()
    assert k.frame_opts.samp_freq == 8000 and k.mel_opts.num_bins == 30 and k.num_ceps == 19
    assert k.frame_opts.frame_shift_ms == 12 and k.frame_opts.window_type == "hamming"


def test_fbank_options(tmp_path):
    conf = tmp_path / "fbank.conf"
    conf.write_text("--num-mel-bins=40\n--use-log-fbank=false\n--use-power=false\n"
                    "--use-energy=true\n")
    c = read_feature_config("fbank", conf)
    k = c.to_knf()
    assert (k.mel_opts.num_bins, k.use_log_fbank, k.use_power, k.use_energy) == (40, False,
                                                                                   False, True)
    assert c.frame.dither == 1.0  # Kaldi's default when unset


def test_unknown_option_names_file_and_line(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("--use-energy=false\n\n--num-cepstra=13\n")
    with pytest.raises(UsageError, match=r"--num-cepstra=13.*bad\.conf:3"):
        read_feature_config("mfcc", conf)
    conf.write_text("--use-power=false\n")  # an fbank option is unknown to MFCC
    with pytest.raises(UsageError, match=r"bad\.conf:1"):
        read_feature_config("mfcc", conf)
    conf.write_text("--dither=abc\n")
    with pytest.raises(UsageError, match=r"dither.*bad\.conf:1"):
        read_feature_config("mfcc", conf)


@pytest.mark.parametrize("argv,msg", [
    (["--window-type=triangle"], "Invalid window type triangle"),
    (["--num-ceps=30"], "--num-ceps=30 must be between 1 and --num-mel-bins=23"),
    (["--frame-shift=0"], "Invalid frame options"),
])
def test_bad_values(argv, msg):
    with pytest.raises(UsageError, match=msg):
        read_feature_config("mfcc", overrides=argv).to_knf()


def test_shipped_confs():
    m = read_feature_config("mfcc", ROOT / "conf" / "mfcc.conf")
    assert (m.feat.use_energy, m.frame.sample_frequency, m.frame.dither) == (False, 16000.0, 0.0)
    f = read_feature_config("fbank", ROOT / "conf" / "fbank.conf")
    assert (f.mel.num_mel_bins, f.frame.sample_frequency, f.frame.dither) == (40, 16000.0, 0.0)


def test_frame_count_formula():
    c = FeatureConfig("mfcc")
    assert [c.frame.num_frames(n) for n in (0, 399, 400, 559, 560, 16000)] == [0, 0, 1, 1, 2, 98]
    c.frame.snip_edges = False
    assert [c.frame.num_frames(n) for n in (0, 79, 80, 16000)] == [0, 0, 1, 100]
