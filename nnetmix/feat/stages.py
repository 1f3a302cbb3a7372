"""The per-utterance steps of a feature chain: apply-cmvn, add-deltas, splice-feats and
transform-feats as callables.

The bin tools (through nnetmix.feat.tables) and a feature pipeline opened in process
(nnetmix.feat.pipeline) both run these, so a pipeline gives bit for bit what the bash chain
``apply-cmvn.py ... | splice-feats.py ... | transform-feats.py final.mat ... |`` gives, with the
same WARNING for a skipped utterance. A step is ``step(key, feats) -> matrix``, or None for 'no output for this key'.

Options come as the text a script holds (``cmvn_opts="--norm-means=true --norm-vars=false"``),
parsed with the binaries' names, spellings and defaults.
"""
from __future__ import annotations

import logging
import shlex
from typing import Optional

import numpy as np

from nnetmix.errors import UsageError
from nnetmix.feat.cmvn import CmvnError, apply_cmvn
from nnetmix.feat.deltas import add_deltas, splice_frames
from nnetmix.feat.textio import is_rspecifier, read_utt2spk
from nnetmix.kaldi import RandomAccessReader, read_object
from nnetmix.options import str2bool

__all__ = ["CMVN_OPTIONS", "DELTA_OPTIONS", "SPLICE_OPTIONS", "parse_option_text", "CmvnStep",
           "DeltaStep", "SpliceStep", "TransformStep", "apply_transform", "transform_logdet"]

logger = logging.getLogger(__name__)

#: apply-cmvn.py's per-utterance options (name: default); --utt2spk is the step's own argument
CMVN_OPTIONS = {"norm-means": True, "norm-vars": False}
#: add-deltas.py's options (name: default)
DELTA_OPTIONS = {"delta-order": 2, "delta-window": 2, "truncate": 0}
#: splice-feats.py's options (name: default), as Kaldi's splice_opts files hold them
SPLICE_OPTIONS = {"left-context": 4, "right-context": 4}


def parse_option_text(text: str, known: dict, tool: str) -> dict:
    """``'--norm-vars=true ...'`` -> {'norm_vars': True, ...} over ``known``'s defaults.

    Spelled as the binary takes them: ``--name=value``, ``--name`` alone for a true boolean,
    dashes or underscores; anything else is a UsageError naming ``tool``.
    """
    values = {name.replace("-", "_"): default for name, default in known.items()}
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise UsageError(f"{tool} options '{text}': {e}") from None
    for word in words:
        name, eq, value = word[2:].partition("=") if word.startswith("--") else ("", "", "")
        name = name.replace("_", "-")
        if name not in known:
            raise UsageError(f"{tool} options '{text}': unknown option '{word}' (known: "
                             + ", ".join(f"--{k}" for k in known) + ")")
        kind = type(known[name])
        try:
            if not eq:
                if kind is not bool:
                    raise ValueError(f"--{name} takes a value (--{name}=N)")
                parsed = True
            else:
                parsed = str2bool(value) if kind is bool else kind(value)
        except ValueError as e:
            raise UsageError(f"{tool} options '{text}': bad value in '{word}': {e}") from None
        values[name.replace("-", "_")] = parsed
    return values


class CmvnStep:
    """Kaldi's apply-cmvn for one utterance at a time: per-key stats from an rspecifier (through
    ``utt2spk`` when given, else by utterance) or one global stats rxfilename."""

    def __init__(self, cmvn: str, norm_vars: bool = False, norm_means: bool = True,
                 utt2spk: str = ""):
        if norm_vars and not norm_means:
            raise UsageError("You cannot normalize the variance but not the mean.")
        self.cmvn, self.norm_vars, self.norm_means, self.utt2spk = (cmvn, norm_vars,
                                                                    norm_means, utt2spk)
        self.global_stats: Optional[np.ndarray] = None
        self.lookup: Optional[RandomAccessReader] = None
        self.spk_of: dict[str, str] = {}
        if not is_rspecifier(cmvn):
            if utt2spk:
                logger.warning("--utt2spk option is ignored with global CMVN stats %s", cmvn)
            self.global_stats = read_object(cmvn, "mat")
            return
        if utt2spk:
            self.spk_of = read_utt2spk(utt2spk)
        self.lookup = RandomAccessReader(cmvn, "mat")

    @classmethod
    def from_text(cls, cmvn: str, opts: str, utt2spk: str = "") -> "CmvnStep":
        """The step ``apply-cmvn.py <opts> [--utt2spk=...] <cmvn> ...`` runs."""
        o = parse_option_text(opts, CMVN_OPTIONS, "apply-cmvn")
        return cls(cmvn, o["norm_vars"], o["norm_means"], utt2spk)

    def __call__(self, key: str, feats: np.ndarray) -> Optional[np.ndarray]:
        if self.lookup is None:
            return apply_cmvn(self.global_stats, feats, self.norm_vars, self.norm_means,
                              self.cmvn)
        if self.utt2spk and key not in self.spk_of:
            logger.warning("No speaker for utterance %s in %s, producing no output for this "
                           "utterance", key, self.utt2spk)
            return None
        skey = self.spk_of.get(key, key)
        if skey not in self.lookup:
            logger.warning("No normalization statistics available for key %s, producing no "
                           "output for this utterance", skey)
            return None
        try:
            return apply_cmvn(self.lookup[skey], feats, self.norm_vars, self.norm_means, skey)
        except CmvnError as e:
            logger.warning("%s, producing no output for utterance %s", e, key)
            return None

    def close(self) -> None:
        if self.lookup is not None:
            self.lookup.close()

    def __enter__(self) -> "CmvnStep":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class DeltaStep:
    """Kaldi's add-deltas for one utterance (``truncate`` > 0 keeps the first N input dims)."""

    def __init__(self, order: int = 2, window: int = 2, truncate: int = 0):
        self.order, self.window, self.truncate = order, window, truncate

    @classmethod
    def from_text(cls, opts: str) -> "DeltaStep":
        """The step ``add-deltas.py <opts> ...`` runs."""
        o = parse_option_text(opts, DELTA_OPTIONS, "add-deltas")
        return cls(o["delta_order"], o["delta_window"], o["truncate"])

    def __call__(self, key: str, feats: np.ndarray) -> Optional[np.ndarray]:
        if feats.shape[0] == 0:
            logger.warning("Empty feature matrix for utterance %s", key)
            return None
        if self.truncate > 0:
            if self.truncate > feats.shape[1]:
                raise UsageError(f"--truncate={self.truncate} is more than the feature dim "
                                 f"{feats.shape[1]} (key {key})")
            feats = feats[:, :self.truncate]
        return add_deltas(feats, self.order, self.window)


class SpliceStep:
    """Kaldi's splice-feats for one utterance (frames t-left .. t+right side by side)."""

    def __init__(self, left_context: int = 4, right_context: int = 4):
        if left_context < 0 or right_context < 0:
            raise UsageError(f"splice-feats: negative context {left_context}/{right_context}")
        self.left, self.right = left_context, right_context

    @classmethod
    def from_text(cls, opts: str) -> "SpliceStep":
        """The step ``splice-feats.py <opts> ...`` runs (Kaldi's splice_opts file)."""
        o = parse_option_text(opts, SPLICE_OPTIONS, "splice-feats")
        return cls(o["left_context"], o["right_context"])

    def __call__(self, key: str, feats: np.ndarray) -> Optional[np.ndarray]:
        return splice_frames(np.asarray(feats, dtype=np.float32), self.left, self.right)


def apply_transform(feats: np.ndarray, trans: np.ndarray) -> Optional[np.ndarray]:
    """feats @ Mᵀ for a D'xD transform, plus the offset column for D'x(D+1); None when the
    transform fits neither (transform-feats' rule)."""
    d = feats.shape[1]
    feats = np.asarray(feats, dtype=np.float32)
    if trans.shape[1] == d:
        return feats @ trans.T
    if trans.shape[1] == d + 1:
        return feats @ trans[:, :d].T + trans[:, d]
    return None


def transform_logdet(trans: np.ndarray, d: int) -> float:
    """½ log det(L Lᵀ) of the linear part L (the log-determinant, or the pseudo one of a
    dimension-reducing transform), in float as Kaldi's SpMatrix<BaseFloat>::LogDet."""
    lin = trans[:, :d].astype(np.float32)
    sign, logdet = np.linalg.slogdet((lin @ lin.T).astype(np.float64))
    return 0.5 * logdet if sign > 0 else float("nan")


class TransformStep:
    """Kaldi's transform-feats for one utterance: a global matrix (an rxfilename such as
    final.mat), or a table of matrices keyed by utterance, or by speaker through ``utt2spk``
    (fMLLR's trans.JOB). Keys without a transform, or a transform of the wrong size, give
    transform-feats' WARNING and no output. Frames and the (pseudo-)log-determinant are summed
    for the tool's summary line (:meth:`summary`)."""

    def __init__(self, transform: str, utt2spk: str = ""):
        self.transform = transform
        self.table: Optional[RandomAccessReader] = None
        self.matrix: Optional[np.ndarray] = None
        if is_rspecifier(transform):
            self.table = RandomAccessReader(transform, "mat")
        else:
            self.matrix = np.asarray(read_object(transform, "mat"), np.float32)
        self.spk_of: Optional[dict] = read_utt2spk(utt2spk) if utt2spk else None
        self.frames = 0.0
        self.logdet = 0.0
        self.kind = ""  # logdet, pseudo (fewer output dims) or increase (more)

    def __call__(self, key: str, feats: np.ndarray) -> Optional[np.ndarray]:
        who = self.spk_of.get(key) if self.spk_of is not None else key
        if who is None:
            logger.warning("Utt2spk map has no value for utterance %s, producing no output "
                           "for this utterance", key)
            return None
        if self.table is not None and who not in self.table:
            spk = "" if who == key else f" [spk = {who}]"
            logger.warning("No fMLLR transform available for utterance %s%s, producing no "
                           "output for this utterance", key, spk)
            return None
        trans = self.matrix if self.table is None else np.asarray(self.table[who], np.float32)
        d = feats.shape[1]
        out = apply_transform(feats, trans)
        if out is None:
            logger.warning("Transform matrix for key %s has bad dimension %dx%d versus feat "
                           "dim %d", who, trans.shape[0], trans.shape[1], d)
            if trans.shape[1] == d + 2:
                logger.warning("[perhaps the transform was created by compose-transforms, "
                               "and you forgot the --b-is-affine option?]")
            return None
        if not self.kind:
            self.kind = ("logdet" if trans.shape[0] == d else
                         "pseudo" if trans.shape[0] < d else "increase")
        if self.kind != "increase":
            ld = transform_logdet(trans, d)
            if not np.isfinite(ld):
                logger.warning("Matrix has bad logdet %s", ld)
            else:
                self.frames += feats.shape[0]
                self.logdet += feats.shape[0] * ld
        return out

    def summary(self) -> Optional[str]:
        """transform-feats' 'Overall average logdet' line, or None when nothing was summed."""
        if self.kind not in ("logdet", "pseudo") or self.frames <= 0:
            return None
        return "Overall average {}logdet is {} over {} frames.".format(
            "[pseudo-]" if self.kind == "pseudo" else "",
            "{:.6g}".format(self.logdet / self.frames), "{:g}".format(self.frames))

    def close(self) -> None:
        if self.table is not None:
            self.table.close()

    def __enter__(self) -> "TransformStep":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
