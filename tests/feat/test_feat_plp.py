"""PLP against a per-frame numpy transcription of Kaldi's feature-plp.cc, and its bad options.

The reference below is written from Kaldi's formulas (feature-window.cc, mel-computations.cc,
feature-plp.cc), one frame at a time with plain loops, independently of nnetmix/feat/plp.py and
of kaldi-native-fbank: framing, DC removal, pre-emphasis, the povey window, FFT, triangular mel
banks, equal loudness, compression, the inverse DFT, Durbin, LPC to cepstrum, liftering, energy.
"""
import logging
import math
import subprocess
import sys

import kaldi_native_fbank as knf
import numpy as np
import pytest
from helpers import ROOT, dummy_samples, load_bin, script_env, write_wav

from nnetmix.errors import UsageError
from nnetmix.feat import Extractor, read_feature_config
from nnetmix.feat.plp import durbin
from nnetmix.kaldi import SequentialReader

FLT_EPSILON = float(np.finfo(np.float32).eps)
FLT_MIN = float(np.finfo(np.float32).tiny)


def mel(f):
    return 1127.0 * math.log(1.0 + f / 700.0)


def reference_mel_banks(num_bins, low, high, rate, padded):
    """Kaldi's MelBanks as a dense (num_bins, padded/2 + 1) matrix, and the bins' centres."""
    nyquist = rate / 2
    high = high if high > 0 else nyquist + high
    lo, delta = mel(low), (mel(high) - mel(low)) / (num_bins + 1)
    banks = np.zeros((num_bins, padded // 2 + 1))
    centers = []
    for b in range(num_bins):
        left, center, right = lo + b * delta, lo + (b + 1) * delta, lo + (b + 2) * delta
        centers.append(700.0 * (math.exp(center / 1127.0) - 1.0))
        for i in range(padded // 2):
            m = mel(rate / padded * i)
            if left < m < right:
                banks[b, i] = ((m - left) / (center - left) if m <= center
                               else (right - m) / (right - center))
    return banks, centers


def reference_durbin(r):
    """Durbin's recursion as Kaldi writes it: (LPC coefficients, residual energy)."""
    a, err = [0.0] * (len(r) - 1), r[0]
    for i in range(len(r) - 1):
        k = (r[i + 1] + sum(a[j] * r[i - j] for j in range(i))) / err
        err *= max(1 - k * k, 1e-5)
        a = [a[j] - k * a[i - j - 1] for j in range(i)] + [-k] + a[i + 1:]
    return a, err


def reference_plp(x, rate=16000, num_bins=23, low=20.0, high=0.0, lpc_order=12, num_ceps=13,
                  use_energy=True, energy_floor=0.0, raw_energy=True, compress=0.33333,
                  lifter=22, scale=1.0, htk_compat=False):
    size, shift = int(rate * 0.025), int(rate * 0.010)
    padded = 1 << (size - 1).bit_length()
    window = [(0.5 - 0.5 * math.cos(2 * math.pi * i / (size - 1))) ** 0.85 for i in range(size)]
    banks, centers = reference_mel_banks(num_bins, low, high, rate, padded)
    loudness = []
    for f in centers:
        fsq = f * f
        fsub = fsq / (fsq + 1.6e5)
        loudness.append(fsub * fsub * ((fsq + 1.44e6) / (fsq + 9.61e6)))
    out = []
    for t in range(1 + (len(x) - size) // shift):
        frame = np.array(x[t * shift:t * shift + size], dtype=np.float64)
        frame -= frame.mean()
        log_energy = math.log(max(float(frame @ frame), FLT_EPSILON))
        for i in range(size - 1, 0, -1):
            frame[i] -= 0.97 * frame[i - 1]
        frame[0] -= 0.97 * frame[0]
        frame *= window
        if not raw_energy:
            log_energy = math.log(max(float(frame @ frame), FLT_MIN))
        power = np.abs(np.fft.rfft(frame, padded)) ** 2
        energies = [(banks[b] @ power * loudness[b]) ** compress for b in range(num_bins)]
        dup = [energies[0]] + energies + [energies[-1]]
        n = len(dup)
        r = []
        for i in range(lpc_order + 1):
            s = dup[0] + dup[-1] * math.cos(math.pi * i)
            s += sum(2 * dup[j] * math.cos(math.pi * i * j / (n - 1)) for j in range(1, n - 1))
            r.append(s / (2 * (n - 1)))
        a, err = reference_durbin(r)
        c = []
        for i in range(lpc_order):
            s = sum((i - j) * a[j] * c[i - j - 1] for j in range(i))
            c.append(-a[i] - s / (i + 1))
        feat = np.array([max(math.log(err), FLT_MIN)] + c[:num_ceps - 1])
        if lifter:
            feat *= [1 + 0.5 * lifter * math.sin(math.pi * i / lifter) for i in range(num_ceps)]
        feat *= scale
        if use_energy:
            feat[0] = max(log_energy, math.log(energy_floor)) if energy_floor > 0 else log_energy
        if htk_compat:
            feat = np.concatenate([feat[1:], feat[:1]])
        out.append(feat)
    return np.array(out)


def signal(rate=16000, n=9000):
    """Sines plus noise, with a quiet stretch (energy below 1 in some frames: --energy-floor)."""
    x = dummy_samples(n, seed=5, rate=rate).astype(np.float64)
    x[3000:4200] = np.random.default_rng(1).standard_normal(1200) * 0.02
    return x


CASES = [
    ([], {}),
    (["--htk-compat=true", "--use-energy=false"], {"htk_compat": True, "use_energy": False}),
    (["--raw-energy=false", "--energy-floor=1.0"], {"raw_energy": False, "energy_floor": 1.0}),
    (["--energy-floor=1.0", "--htk-compat=true"], {"energy_floor": 1.0, "htk_compat": True}),
    (["--cepstral-lifter=0", "--lpc-order=8", "--num-ceps=9", "--compress-factor=0.5",
      "--cepstral-scale=2.0", "--use-energy=false"],
     {"lifter": 0, "lpc_order": 8, "num_ceps": 9, "compress": 0.5, "scale": 2.0,
      "use_energy": False}),
    (["--num-mel-bins=30", "--lpc-order=20", "--num-ceps=15", "--cepstral-lifter=30",
      "--low-freq=60", "--high-freq=-400"],
     {"num_bins": 30, "lpc_order": 20, "num_ceps": 15, "lifter": 30, "low": 60.0,
      "high": -400.0}),
    (["--sample-frequency=8000", "--num-mel-bins=15", "--lpc-order=10", "--num-ceps=11"],
     {"rate": 8000, "num_bins": 15, "lpc_order": 10, "num_ceps": 11}),
]


@pytest.mark.parametrize("argv,ref_opts", CASES)
def test_plp_equals_kaldi_formulas(argv, ref_opts):
    rate = ref_opts.get("rate", 16000)
    x = signal(rate)
    config = read_feature_config("plp", overrides=["--dither=0", *argv])
    ours = Extractor(config).compute(x.astype(np.float32), rate)
    ref = reference_plp(x, **ref_opts)
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    # knf's front end runs in float32, the reference in float64
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)
    energy_col = -1 if ref_opts.get("htk_compat") else 0
    if ref_opts.get("energy_floor"):
        assert (ours[:, energy_col] == 0.0).any()  # the floor log(1.0) was reached


@pytest.mark.parametrize("rate,argv", [(16000, []), (8000, ["--num-mel-bins=15"]),
                                       (16000, ["--num-mel-bins=40", "--low-freq=100",
                                                "--high-freq=7000"])])
def test_reference_mel_banks_equal_knf(rate, argv):
    """The mel banks under PLP are knf's, as MFCC's: they equal the reference's triangles."""
    config = read_feature_config("plp", overrides=[f"--sample-frequency={rate}", *argv])
    o = config.to_knf()
    knf_banks = np.array(knf.MelBanks(o.mel_opts, o.frame_opts, 1.0).get_matrix())
    padded = 1 << (config.frame.window_size() - 1).bit_length()
    ref, _ = reference_mel_banks(config.mel.num_mel_bins, config.mel.low_freq,
                                 config.mel.high_freq, rate, padded)
    # the same triangles, up to knf's float32 arithmetic on the mel scale
    np.testing.assert_array_equal(knf_banks > 0, ref > 0)
    np.testing.assert_allclose(knf_banks, ref, atol=2e-5)


def test_durbin_rows_and_kaldi_floor():
    """Vectorised Durbin equals the scalar one row by row, including a constant signal's
    autocorrelation, where 1 - k^2 = 0 and Kaldi's floor of 1e-5 keeps the residual positive."""
    rng = np.random.default_rng(2)
    rows = [np.correlate(s, s, "full")[len(s) - 1:len(s) + 8] for s in rng.standard_normal((5, 60))]
    rows.append(np.ones(9))
    lpc, err = durbin(np.array(rows))
    for row, a, e in zip(rows, lpc, err):
        ref_a, ref_e = reference_durbin(list(row))
        np.testing.assert_allclose(a, ref_a, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(e, ref_e, rtol=1e-10)
    assert err[-1] > 0


def test_digital_silence_warns_and_stays_finite(caplog):
    x = signal()
    x[3000:4200] = 0.0
    config = read_feature_config("plp", overrides=["--dither=0", "--use-energy=false"])
    with caplog.at_level(logging.WARNING):
        feats = Extractor(config).compute(x.astype(np.float32), 16000, key="utt1")
    assert np.isfinite(feats).all()
    starts = 160 * np.arange(len(feats))
    zero = (starts >= 3000) & (starts + 400 <= 4200)  # frames wholly inside the silence
    silent = np.all(feats[:, 1:] == 0.0, axis=1)
    np.testing.assert_array_equal(silent, zero)
    assert np.all(feats[silent, 0] == np.float32(FLT_MIN))
    assert (f"Zero energy in LPC computation: {zero.sum()} of {len(feats)} frames of utterance "
            "utt1") in caplog.text


def test_dither_as_mfcc(tmp_path):
    """--dither goes through knf's front end, as MFCC's: knf seeds each frame's generator from C's
    rand(), which no one seeds, so a rerun of the tool repeats its noise for PLP as for MFCC."""
    write_wav(tmp_path / "a.wav", 8000, seed=4)
    (tmp_path / "wav.scp").write_text(f"a {tmp_path / 'a.wav'}\n")
    arks = {}
    for tool, dither, run in [(t, d, r) for t in ("mfcc", "plp") for d in (0, 1) for r in (0, 1)]:
        ark = tmp_path / f"{tool}{dither}{run}.ark"
        subprocess.run([sys.executable, str(ROOT / "bin" / f"compute-{tool}-feats.py"),
                        f"--dither={dither}", f"scp:{tmp_path / 'wav.scp'}", f"ark:{ark}"],
                       env=script_env(), check=True, capture_output=True)
        arks[tool, dither, run] = ark.read_bytes()
    for tool in ("mfcc", "plp"):
        assert arks[tool, 1, 0] == arks[tool, 1, 1] != arks[tool, 0, 0]
    with SequentialReader(f"ark:{tmp_path / 'plp00.ark'}", "mat") as r:
        plain = np.array(next(iter(r))[1])
    with SequentialReader(f"ark:{tmp_path / 'plp10.ark'}", "mat") as r:
        dithered = np.array(next(iter(r))[1])
    assert np.median(np.abs(plain - dithered)) < 0.05  # small noise on a loud signal


@pytest.mark.parametrize("argv,message", [
    (["--lpc-order=23"], "--lpc-order=23 must be between 1 and --num-mel-bins - 1 = 22"),
    (["--lpc-order=0"], "--lpc-order=0 must be between 1"),
    (["--num-ceps=14"], "--num-ceps=14 must be between 1 and --lpc-order + 1 = 13"),
    (["--compress-factor=0"], "--compress-factor=0.0 must be positive"),
    (["--cepstral-lifter=-1"], "--cepstral-lifter=-1 must be >= 0"),
    (["--num-mel-bins=2"], "must have at least 3 mel bins"),
])
def test_bad_options_one_line_error(tmp_path, capsys, argv, message):
    write_wav(tmp_path / "a.wav", 4000)
    (tmp_path / "wav.scp").write_text(f"a {tmp_path / 'a.wav'}\n")
    rc = load_bin("compute-plp-feats.py").main(
        [*argv, f"scp:{tmp_path / 'wav.scp'}", f"ark:{tmp_path / 'f.ark'}"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert rc != 0 and len(errors) == 1 and message in errors[0], err
    assert "Traceback" not in err and not (tmp_path / "f.ark").exists()
    with pytest.raises(UsageError):
        read_feature_config("plp", overrides=argv).validate()


def test_compute_plp_feats_tool(tmp_path, capsys):
    write_wav(tmp_path / "a.wav", 5600, seed=2)
    (tmp_path / "wav.scp").write_text(f"a {tmp_path / 'a.wav'}\n")
    rc = load_bin("compute-plp-feats.py").main(
        ["--dither=0", f"--write-num-frames=ark,t:{tmp_path / 'n'}", f"scp:{tmp_path / 'wav.scp'}",
         f"ark:{tmp_path / 'f.ark'}"])
    assert rc == 0 and "Done 1 out of 1 utterances." in capsys.readouterr().err
    with SequentialReader(f"ark:{tmp_path / 'f.ark'}", "mat") as r:
        (key, feats), = list(r)
    x = dummy_samples(5600, seed=2).astype(np.float64)
    assert key == "a" and feats.shape == (33, 13)
    np.testing.assert_allclose(feats, reference_plp(x), rtol=1e-4, atol=1e-4)
    assert (tmp_path / "n").read_text() == "a 33\n"
