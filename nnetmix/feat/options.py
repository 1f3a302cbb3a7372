"""Kaldi's feature options, by Kaldi's names and defaults, mapped onto kaldi-native-fbank.

The option groups mirror Kaldi's FrameExtractionOptions (src/feat/feature-window.h),
MelBanksOptions (src/feat/mel-computations.h), MfccOptions (src/feat/feature-mfcc.h),
FbankOptions (src/feat/feature-fbank.h) and PlpOptions (src/feat/feature-plp.h): each field becomes ``--field-name`` on a bin/ tool's
command line and in a ``--config`` file, so an existing Kaldi ``conf/mfcc.conf`` reads unchanged.

Defaults are Kaldi's, not kaldi-native-fbank's (knf defaults dither to 3e-5, Kaldi to 1.0, and
knf's MelBanksOptions to 25 bins where Kaldi's MFCC/fbank use 23). Note that Kaldi's default
``--dither=1.0`` adds random noise, so two runs differ; nnetmix's conf/mfcc.conf and
conf/fbank.conf set ``--dither=0`` for reproducible features.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import kaldi_native_fbank as knf

from nnetmix.errors import UsageError
from nnetmix.options import OptionSet, option

__all__ = ["FrameOptions", "MelOptions", "MfccOptions", "FbankOptions", "PlpOptions",
           "FeatureConfig", "FEATURE_KINDS",
           "read_feature_config", "config_from_options", "WINDOW_TYPES"]

WINDOW_TYPES = ("hamming", "hanning", "povey", "rectangular", "sine", "blackman")


@dataclass
class FrameOptions:
    """Framing and waveform processing (Kaldi's FrameExtractionOptions)."""

    sample_frequency: float = option(16000.0, "Waveform data sample frequency (must match the "
                                     "waveform file, if specified there)")
    frame_shift: float = option(10.0, "Frame shift in milliseconds")
    frame_length: float = option(25.0, "Frame length in milliseconds")
    dither: float = option(1.0, "Dithering constant (0.0 means no dither). Kaldi's default 1.0 "
                           "makes features random; nnetmix confs set 0")
    preemphasis_coefficient: float = option(0.97, "Coefficient for use in signal preemphasis")
    remove_dc_offset: bool = option(True, "Subtract mean from waveform on each frame")
    window_type: str = option("povey", "Type of window (\"hamming\"|\"hanning\"|\"povey\"|"
                              "\"rectangular\"|\"sine\"|\"blackman\")")
    round_to_power_of_two: bool = option(True, "If true, round window size to power of two by "
                                         "zero-padding input to FFT.")
    blackman_coeff: float = option(0.42, "Constant coefficient for generalized Blackman window.")
    snip_edges: bool = option(True, "If true, end effects will be handled by outputting only "
                              "frames that completely fit in the file, and the number of "
                              "frames depends on the frame-length.  If false, the number of "
                              "frames depends only on the frame-shift, and we reflect the data "
                              "at the ends.")

    def window_size(self) -> int:
        """Samples per frame (Kaldi's WindowSize(): 400 at 16 kHz, 25 ms)."""
        return int(self.sample_frequency * 0.001 * self.frame_length)

    def window_shift(self) -> int:
        """Samples per shift (Kaldi's WindowShift(): 160 at 16 kHz, 10 ms)."""
        return int(self.sample_frequency * 0.001 * self.frame_shift)

    def num_frames(self, num_samples: int) -> int:
        """Kaldi's NumFrames(): 1 + (N - 400) // 160 with --snip-edges, else (N + 80) // 160."""
        size, shift = self.window_size(), self.window_shift()
        if self.snip_edges:
            return 0 if num_samples < size else 1 + (num_samples - size) // shift
        return (num_samples + shift // 2) // shift

    def validate(self) -> None:
        if self.window_type not in WINDOW_TYPES:
            raise UsageError(f"Invalid window type {self.window_type} "
                             f"(expected one of {', '.join(WINDOW_TYPES)})")
        if self.window_shift() <= 0 or self.window_size() < 2:
            raise UsageError(f"Invalid frame options: --frame-shift={self.frame_shift} "
                             f"--frame-length={self.frame_length} at --sample-frequency="
                             f"{self.sample_frequency}")

    def to_knf(self) -> knf.FrameExtractionOptions:
        o = knf.FrameExtractionOptions()
        o.samp_freq = self.sample_frequency
        o.frame_shift_ms = self.frame_shift
        o.frame_length_ms = self.frame_length
        o.dither = self.dither
        o.preemph_coeff = self.preemphasis_coefficient
        o.remove_dc_offset = self.remove_dc_offset
        o.window_type = self.window_type
        o.round_to_power_of_two = self.round_to_power_of_two
        o.blackman_coeff = self.blackman_coeff
        o.snip_edges = self.snip_edges
        return o


@dataclass
class MelOptions:
    """Mel filterbank (Kaldi's MelBanksOptions, with the 23 bins MFCC and fbank default to)."""

    num_mel_bins: int = option(23, "Number of triangular mel-frequency bins")
    low_freq: float = option(20.0, "Low cutoff frequency for mel bins")
    high_freq: float = option(0.0, "High cutoff frequency for mel bins (if <= 0, offset "
                              "from Nyquist)")
    vtln_low: float = option(100.0, "Low inflection point in piecewise linear VTLN "
                             "warping function")
    vtln_high: float = option(-500.0, "High inflection point in piecewise linear VTLN warping "
                              "function (if negative, offset from high-mel-freq")
    debug_mel: bool = option(False, "Print out debugging information for mel bin computation")
    htk_mode: bool = option(False, "Compute mel bins as HTK does (only with --htk-compat)")

    def to_knf(self) -> knf.MelBanksOptions:
        o = knf.MelBanksOptions()
        o.num_bins = self.num_mel_bins
        o.low_freq = self.low_freq
        o.high_freq = self.high_freq
        o.vtln_low = self.vtln_low
        o.vtln_high = self.vtln_high
        o.debug_mel = self.debug_mel
        o.htk_mode = self.htk_mode
        o.is_librosa = False  # knf's librosa/slaney options are not Kaldi's; keep them off
        return o


@dataclass
class MfccOptions:
    """MFCC-specific options (Kaldi's MfccOptions)."""

    num_ceps: int = option(13, "Number of cepstra in MFCC computation (including C0)")
    use_energy: bool = option(True, "Use energy (not C0) in MFCC computation")
    energy_floor: float = option(0.0, "Floor on energy (absolute, not relative) in MFCC "
                                 "computation. Only makes a difference if --use-energy=true; only "
                                 "necessary if --dither=0.0.  Suggested values: 0.1 or 1.0")
    raw_energy: bool = option(True, "If true, compute energy before preemphasis and windowing")
    cepstral_lifter: float = option(22.0, "Constant that controls scaling of MFCCs")
    htk_compat: bool = option(False, "If true, put energy or C0 last and use a factor of sqrt(2) "
                              "on C0.  Warning: not sufficient to get HTK compatible features "
                              "(need to change other parameters).")


@dataclass
class FbankOptions:
    """Filterbank-specific options (Kaldi's FbankOptions)."""

    use_energy: bool = option(False, "Add an extra dimension with energy to the FBANK output.")
    energy_floor: float = option(0.0, "Floor on energy (absolute, not relative) in FBANK "
                                 "computation. Only makes a difference if --use-energy=true; only "
                                 "necessary if --dither=0.0.  Suggested values: 0.1 or 1.0")
    raw_energy: bool = option(True, "If true, compute energy before preemphasis and windowing")
    htk_compat: bool = option(False, "If true, put energy last.  Warning: not sufficient to get "
                              "HTK compatible features (need to change other parameters).")
    use_log_fbank: bool = option(True, "If true, produce log-filterbank, else produce linear.")
    use_power: bool = option(True, "If true, use power, else use magnitude.")


@dataclass
class PlpOptions:
    """PLP-specific options (Kaldi's PlpOptions); the mel bins default to 23 as for MFCC."""

    lpc_order: int = option(12, "Order of LPC analysis in PLP computation")
    num_ceps: int = option(13, "Number of cepstra in PLP computation (including C0)")
    use_energy: bool = option(True, "Use energy (not C0) for zeroth PLP feature")
    energy_floor: float = option(0.0, "Floor on energy (absolute, not relative) in PLP "
                                 "computation. Only makes a difference if --use-energy=true; only "
                                 "necessary if --dither=0.0.  Suggested values: 0.1 or 1.0")
    raw_energy: bool = option(True, "If true, compute energy before preemphasis and windowing")
    compress_factor: float = option(0.33333, "Compression factor in PLP computation")
    cepstral_lifter: int = option(22, "Constant that controls scaling of PLPs")
    cepstral_scale: float = option(1.0, "Scaling constant in PLP computation")
    htk_compat: bool = option(False, "If true, put energy or C0 last.  Warning: not sufficient "
                              "to get HTK compatible features (need to change other parameters).")


# The feature kinds and the option group of each (compute-<kind>-feats).
FEATURE_KINDS = {"mfcc": MfccOptions, "fbank": FbankOptions, "plp": PlpOptions}


@dataclass
class FeatureConfig:
    """Everything one extractor needs: kind ("mfcc", "fbank" or "plp") and the three option
    groups."""

    kind: str = "mfcc"
    frame: FrameOptions = field(default_factory=FrameOptions)
    mel: MelOptions = field(default_factory=MelOptions)
    feat: MfccOptions | FbankOptions | PlpOptions = field(default_factory=MfccOptions)

    def __post_init__(self) -> None:
        if self.kind not in FEATURE_KINDS:
            raise UsageError(f"unknown feature kind '{self.kind}' (expected "
                             f"{', '.join(FEATURE_KINDS)})")
        want = FEATURE_KINDS[self.kind]
        if not isinstance(self.feat, want):
            raise UsageError(f"{self.kind} features need {want.__name__}, got "
                             f"{type(self.feat).__name__}")

    def validate(self) -> None:
        self.frame.validate()
        if self.kind == "mfcc" and not 1 <= self.feat.num_ceps <= self.mel.num_mel_bins:
            raise UsageError(f"--num-ceps={self.feat.num_ceps} must be between 1 and "
                             f"--num-mel-bins={self.mel.num_mel_bins}")
        if self.mel.num_mel_bins < 3:
            raise UsageError(f"--num-mel-bins={self.mel.num_mel_bins}: must have at least 3 "
                             "mel bins")
        if self.kind == "plp":
            self._validate_plp()

    def _validate_plp(self) -> None:
        """Kaldi asserts num-ceps <= lpc-order + 1 mid-computation; the rest it does not check
        and answers with NaN or meaningless cepstra, so they are refused here, up front."""
        f, bins = self.feat, self.mel.num_mel_bins
        if not 1 <= f.lpc_order < bins:
            # an all-pole model fitted to `bins` spectral samples needs fewer poles than samples
            raise UsageError(f"--lpc-order={f.lpc_order} must be between 1 and --num-mel-bins "
                             f"- 1 = {bins - 1}")
        if not 1 <= f.num_ceps <= f.lpc_order + 1:
            raise UsageError(f"--num-ceps={f.num_ceps} must be between 1 and --lpc-order + 1 = "
                             f"{f.lpc_order + 1} (it counts C0)")
        if not f.compress_factor > 0:
            raise UsageError(f"--compress-factor={f.compress_factor} must be positive")
        if f.cepstral_lifter < 0:
            raise UsageError(f"--cepstral-lifter={f.cepstral_lifter} must be >= 0 (0: no "
                             "liftering)")

    def to_knf(self):
        """The kaldi-native-fbank options object (knf.MfccOptions or knf.FbankOptions).

        For PLP it is the front end: linear mel power spectra (Kaldi's PLP runs the same
        mel banks on the same power spectrum as fbank) with the log energy first when
        --use-energy; nnetmix.feat.plp does the rest."""
        self.validate()
        f = self.feat
        if self.kind == "mfcc":
            o = knf.MfccOptions()
            o.num_ceps = f.num_ceps
            o.cepstral_lifter = f.cepstral_lifter
        elif self.kind == "plp":
            o = knf.FbankOptions()
            o.use_log_fbank = False
            o.use_power = True
        else:
            o = knf.FbankOptions()
            o.use_log_fbank = f.use_log_fbank
            o.use_power = f.use_power
        o.frame_opts = self.frame.to_knf()
        o.mel_opts = self.mel.to_knf()
        o.use_energy = f.use_energy
        o.energy_floor = f.energy_floor
        o.raw_energy = f.raw_energy
        o.htk_compat = f.htk_compat and self.kind != "plp"  # PLP reorders its own output
        return o


def read_feature_config(kind: str, config: str | Path | None = None,
                        overrides: list[str] | None = None) -> FeatureConfig:
    """Build a FeatureConfig from a Kaldi-syntax config file plus ``--name=value`` overrides.

    Unknown option names fail with UsageError naming the file and line, as Kaldi's
    ParseOptions::ReadConfigFile does.
    """
    parser = OptionSet()
    for cls in (FrameOptions, MelOptions, _feat_group(kind)):
        parser.register_group(cls)
    argv = ([f"--config={config}"] if config else []) + list(overrides or [])
    opts, _ = parser.parse(argv)
    return config_from_options(kind, parser, opts)


def config_from_options(kind: str, parser, opts) -> FeatureConfig:
    """A FeatureConfig from options parsed by a parser that registered the three groups."""
    return FeatureConfig(kind=kind, frame=parser.group(FrameOptions, opts),
                         mel=parser.group(MelOptions, opts),
                         feat=parser.group(_feat_group(kind), opts))


def _feat_group(kind: str) -> type:
    if kind not in FEATURE_KINDS:
        raise UsageError(f"unknown feature kind '{kind}' (expected {', '.join(FEATURE_KINDS)})")
    return FEATURE_KINDS[kind]


def _check_unique_fields() -> None:
    """Kaldi's option names are flat; make sure no two groups share one."""
    seen: set[str] = set()
    for cls in (FrameOptions, MelOptions):
        for f in dataclasses.fields(cls):
            assert f.name not in seen, f.name
            seen.add(f.name)
    for cls in FEATURE_KINDS.values():
        assert not seen & {f.name for f in dataclasses.fields(cls)}, cls


_check_unique_fields()
