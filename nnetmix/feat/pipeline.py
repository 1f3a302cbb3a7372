"""One feature chain described once, and the one function every tool reads features with.

A :class:`FeaturePipeline` is what ``steps/nnet/train.sh`` used to write as bash text,
``ark:apply-cmvn.py ... scp:train.scp ark:- | add-deltas.py ... ark:- ark:- |``, for one data
set: the utterance list (a feats scp whose keys and order define the table; train.sh's shuffled
copy), per-speaker CMVN (apply-cmvn's stats, ``--utt2spk`` and options as text) and deltas
(add-deltas' options as text), splicing (splice-feats' options), a global transform (an LDA or
LDA+MLLT ``final.mat``) and per-speaker transforms (fMLLR ``trans.JOB``), applied in that order
as Kaldi's steps/ scripts chain them. It is stored as a small JSON file in the experiment directory
(``make-feature-pipeline.py`` writes it) and named on a command line as ``pipeline:<file.json>``
wherever an rspecifier goes.

:func:`open_features` opens a pipeline in process for the whole table or any subset of keys (an
MPI rank's shard) with the steps apply-cmvn.py and add-deltas.py run (nnetmix.feat.stages), so
the matrices are bit for bit the bash chain's, and it opens any Kaldi rspecifier as before, so a
user's ``ark:... |`` keeps working. Every field after ``utt_list`` is optional; a file with a
field this version does not know is refused rather than half-applied.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from nnetmix.errors import NnetmixError, UsageError
from nnetmix.feat.stages import CMVN_OPTIONS, DELTA_OPTIONS, SPLICE_OPTIONS, CmvnStep, \
    DeltaStep, SpliceStep, TransformStep, parse_option_text
from nnetmix.feat.textio import read_utt2spk
from nnetmix.kaldi import RandomAccessReader, SequentialReader
from nnetmix.kaldi.specifier import classify_rxfilename, parse_rspecifier
from nnetmix.options import option
from nnetmix.outfile import output_file

__all__ = ["PIPELINE_PREFIX", "PipelineError", "FeaturePipeline", "FeatureReader",
           "open_features", "table_keys", "first_keys", "is_pipeline", "opts_from_dir",
           "speakers_of"]

#: how a pipeline file is named where an rspecifier goes
PIPELINE_PREFIX = "pipeline:"
_VERSION = 1

Step = Callable[[str, np.ndarray], Optional[np.ndarray]]
#: fields written only when set (added after version 1 files were first written)
_OPTIONAL_FIELDS = ("splice_opts", "transform", "spk_transforms", "spk_utt2spk")


class PipelineError(NnetmixError):
    """A pipeline file that is missing, not JSON, or has a missing or bad field."""


@dataclasses.dataclass
class FeaturePipeline:
    """The feature chain of one data set; stored as JSON (:meth:`write`, :meth:`read`)."""

    utt_list: str = option(dataclasses.MISSING, "feats scp whose keys, in its order, are the table "
                           "(e.g. train.sh's shuffled $dir/train.scp)")
    cmvn: str = option("", "apply-cmvn's <cmvn-stats-rspecifier|rxfilename>, e.g. "
                       "scp:data/train/cmvn.scp; empty: no CMVN")
    cmvn_opts: str = option("", "apply-cmvn's options as text, e.g. '--norm-vars=false'")
    utt2spk: str = option("", "apply-cmvn's --utt2spk rspecifier; empty: stats per utterance")
    delta_opts: str = option("", "add-deltas' options as text; empty: no deltas (Kaldi's "
                             "delta_opts convention)")
    splice_opts: str = option("", "splice-feats' options as text, e.g. '--left-context=3 "
                              "--right-context=3'; empty: no splicing")
    transform: str = option("", "transform-feats' global matrix rxfilename (final.mat of an LDA or "
                            "LDA+MLLT system); empty: none")
    spk_transforms: str = option("", "transform-feats' table of per-speaker transforms (fMLLR, "
                                 "e.g. ark:exp/tri3/trans.1), looked up through 'spk_utt2spk'; "
                                 "empty: none")
    spk_utt2spk: str = option("", "utt2spk rspecifier for 'spk_transforms'; empty: the transforms "
                              "are keyed by utterance")

    def check(self, where: str = "feature pipeline") -> None:
        """Refuse what the steps would refuse, naming ``where`` (the file)."""
        if not self.utt_list:
            raise PipelineError(f"{where}: field 'utt_list' is empty (the feats scp to read)")
        for name in ("utt_list", "cmvn", "cmvn_opts", "utt2spk", "delta_opts", "splice_opts",
                     "transform", "spk_transforms", "spk_utt2spk"):
            if not isinstance(getattr(self, name), str):
                raise PipelineError(f"{where}: field '{name}' must be a string, got "
                                    f"{getattr(self, name)!r}")
        if (self.cmvn_opts or self.utt2spk) and not self.cmvn:
            raise PipelineError(f"{where}: 'cmvn_opts'/'utt2spk' without 'cmvn' (the stats)")
        if self.spk_utt2spk and not self.spk_transforms:
            raise PipelineError(f"{where}: 'spk_utt2spk' without 'spk_transforms'")
        try:
            parse_option_text(self.cmvn_opts, CMVN_OPTIONS, "apply-cmvn")
            parse_option_text(self.delta_opts, DELTA_OPTIONS, "add-deltas")
            parse_option_text(self.splice_opts, SPLICE_OPTIONS, "splice-feats")
        except UsageError as e:
            raise PipelineError(f"{where}: {e}") from None

    @classmethod
    def for_data_dir(cls, data: str, cmvn_opts: str = "", delta_opts: str = "",
                     utt_list: str = "", splice_opts: str = "", transform: str = "",
                     spk_transforms: str = "") -> "FeaturePipeline":
        """The chain the scripts build for a data directory: ``utt_list`` (default
        <data>/feats.scp), per-speaker CMVN from <data>/cmvn.scp and <data>/utt2spk when
        ``cmvn_opts`` is not empty, deltas when ``delta_opts`` is not empty, splicing and the
        global ``transform`` (a file) when given, and per-speaker ``spk_transforms`` (an
        rspecifier) looked up through <data>/utt2spk."""
        utt_list = utt_list or os.path.join(data, "feats.scp")
        needed = [(utt_list, "")]
        cmvn = utt2spk = ""
        spk_map = os.path.join(data, "utt2spk")
        if cmvn_opts:
            cmvn, utt2spk = os.path.join(data, "cmvn.scp"), spk_map
            needed += [(p, f" (needed by --cmvn-opts '{cmvn_opts}')") for p in (cmvn, utt2spk)]
        if transform:
            needed.append((transform, " (the transform)"))
        if spk_transforms:
            needed.append((spk_map, f" (needed by the transforms {spk_transforms})"))
        for path, why in needed:
            if not os.path.isfile(path):
                raise PipelineError(f"no such file {path}{why}")
        pipe = cls(utt_list, f"scp:{cmvn}" if cmvn else "", cmvn_opts,
                   f"ark:{utt2spk}" if utt2spk else "", delta_opts, splice_opts, transform,
                   spk_transforms, f"ark:{spk_map}" if spk_transforms else "")
        pipe.check(data)
        return pipe

    def to_dict(self) -> dict:
        """The JSON object; the transform fields are left out while empty, so a chain without
        them is written as before they existed."""
        out = {"version": _VERSION, **dataclasses.asdict(self)}
        for name in _OPTIONAL_FIELDS:
            if not out[name]:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "feature pipeline") -> "FeaturePipeline":
        if not isinstance(data, dict):
            raise PipelineError(f"{where}: expected a JSON object, got {type(data).__name__}")
        data = dict(data)
        version = data.pop("version", None)
        if version != _VERSION:
            raise PipelineError(f"{where}: field 'version' is {version!r}, this nnetmix reads "
                                f"version {_VERSION}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise PipelineError(f"{where}: unknown field '{unknown[0]}' (known: "
                                f"{', '.join(sorted(names))})")
        if "utt_list" not in data:
            raise PipelineError(f"{where}: missing field 'utt_list'")
        pipe = cls(**data)
        pipe.check(where)
        return pipe

    def write(self, path: str) -> None:
        """Write the JSON file atomically (a reader never sees half a file)."""
        self.check(path)
        with output_file(path) as fh:
            json.dump(self.to_dict(), fh, indent=1)
            fh.write("\n")

    @classmethod
    def read(cls, path: str) -> "FeaturePipeline":
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as e:
            raise PipelineError(f"{path}: cannot read the feature pipeline ({e.strerror})") \
                from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise PipelineError(f"{path}: not a feature pipeline: bad JSON at line {e.lineno} "
                                f"({e.msg})") from None
        return cls.from_dict(data, path)

    def keys(self) -> list[str]:
        """The utterance list's keys in order (reads the scp, no matrix)."""
        with RandomAccessReader(f"scp:{self.utt_list}", "mat") as r:
            return r.keys()

    def open(self, keys: Optional[Sequence[str]] = None) -> "FeatureReader":
        """(key, matrix) of the whole list, or of ``keys`` only (in the list's order, without
        reading the others; keys the list lacks are left out); matrices after CMVN or deltas
        are float32, as the binaries write them."""
        stack = contextlib.ExitStack()
        try:
            steps: list[Step] = []
            if self.cmvn:
                steps.append(stack.enter_context(
                    CmvnStep.from_text(self.cmvn, self.cmvn_opts, self.utt2spk)))
            if self.delta_opts:
                steps.append(DeltaStep.from_text(self.delta_opts))
            if self.splice_opts:
                steps.append(SpliceStep.from_text(self.splice_opts))
            if self.transform:
                steps.append(stack.enter_context(TransformStep(self.transform)))
            if self.spk_transforms:
                steps.append(stack.enter_context(
                    TransformStep(self.spk_transforms, self.spk_utt2spk)))
            items = _read_table(f"scp:{self.utt_list}", keys, stack, by_key=True)
        except BaseException:
            stack.close()
            raise
        return FeatureReader(_apply(items, steps), stack)


def _apply(items: Iterator[tuple[str, np.ndarray]], steps: list[Step]
           ) -> Iterator[tuple[str, np.ndarray]]:
    for key, mat in items:
        for step in steps:
            mat = step(key, mat)
            if mat is None:
                break
        else:
            yield key, mat


class FeatureReader:
    """The (key, matrix) pairs of one feature table, read once; a context manager that closes
    the files and pipes it opened."""

    def __init__(self, items: Iterator[tuple[str, np.ndarray]], stack: contextlib.ExitStack):
        self._items = items
        self._stack = stack
        self._started = False

    def __iter__(self) -> Iterator[tuple[str, np.ndarray]]:
        if self._started:
            raise RuntimeError("a feature table can be iterated once")
        self._started = True
        return self._items

    def close(self) -> None:
        close = getattr(self._items, "close", None)
        if close is not None:
            close()
        self._stack.close()

    def __enter__(self) -> "FeatureReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def opts_from_dir(directory: str, gmm: bool = False) -> dict[str, str]:
    """The feature chain a model directory keeps, as Kaldi's steps/ scripts read it: the files
    ``cmvn_opts``, ``delta_opts`` and ``splice_opts`` (one line each; a missing file means
    empty) and ``final.mat``. As in Kaldi, a directory with ``final.mat`` has LDA features
    (splice, then the transform) and its ``delta_opts`` is not used. Keys: cmvn_opts,
    delta_opts, splice_opts, transform.

    ``gmm``: read it as Kaldi's GMM scripts do (their feat_type), where an empty option file
    means the tool's defaults rather than no step: CMVN ``--norm-means=true``, splicing ±4
    frames (splice-feats'), deltas ``--delta-order=2``."""
    out = {}
    for name in ("cmvn_opts", "delta_opts", "splice_opts"):
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as fh:
                out[name] = fh.read().strip()
        except FileNotFoundError:
            out[name] = ""
        except OSError as e:
            raise PipelineError(f"{path}: cannot read ({e.strerror})") from None
    mat = os.path.join(directory, "final.mat")
    out["transform"] = mat if os.path.isfile(mat) else ""
    if out["transform"]:
        out["delta_opts"] = ""
    else:
        out["splice_opts"] = ""
    if gmm:
        out["cmvn_opts"] = out["cmvn_opts"] or "--norm-means=true"
        if out["transform"]:
            out["splice_opts"] = out["splice_opts"] or "--left-context=4 --right-context=4"
        else:
            out["delta_opts"] = out["delta_opts"] or "--delta-order=2"
    return out


def is_pipeline(rspecifier: str) -> bool:
    """True for ``pipeline:<file.json>``."""
    return rspecifier.startswith(PIPELINE_PREFIX)


def _scp_file(rspecifier: str) -> bool:
    spec = parse_rspecifier(rspecifier)
    return spec.type == "scp" and classify_rxfilename(spec.filename).kind == "file"


def _read_table(rspecifier: str, keys: Optional[Sequence[str]], stack: contextlib.ExitStack,
                by_key: bool) -> Iterator[tuple[str, np.ndarray]]:
    """The table's (key, matrix) pairs; with ``keys``, only those: looked up in the table's
    order when ``by_key`` (an scp file), else read sequentially and the others skipped."""
    if keys is None or not by_key:
        reader = stack.enter_context(SequentialReader(rspecifier, "mat"))
        if keys is None:
            return iter(reader)
        wanted = set(keys)
        return ((k, m) for k, m in reader if k in wanted)
    table = stack.enter_context(RandomAccessReader(rspecifier, "mat"))
    wanted = set(keys)
    return ((k, table[k]) for k in table.keys() if k in wanted)


def open_features(rspecifier: str, keys: Optional[Sequence[str]] = None) -> FeatureReader:
    """Open a feature table for reading: any Kaldi rspecifier, or ``pipeline:<file.json>``.

    ``keys``: only these utterances, in the table's order. A pipeline or an ``scp:`` file reads
    just those (each matrix looked up by key); any other rspecifier (``ark:... |``) is read
    whole and the other keys skipped. Use as ``with open_features(r, keys) as f: for k, m in f``.
    """
    if is_pipeline(rspecifier):
        return FeaturePipeline.read(rspecifier[len(PIPELINE_PREFIX):]).open(keys)
    stack = contextlib.ExitStack()
    try:
        items = _read_table(rspecifier, keys, stack,
                            by_key=keys is not None and _scp_file(rspecifier))
    except BaseException:
        stack.close()
        raise
    return FeatureReader(items, stack)


def table_keys(rspecifier: str) -> Optional[list[str]]:
    """The table's keys in order when they are known without reading a matrix (a pipeline, an
    ``scp:`` file), else None."""
    if is_pipeline(rspecifier):
        return FeaturePipeline.read(rspecifier[len(PIPELINE_PREFIX):]).keys()
    if not _scp_file(rspecifier):
        return None
    with RandomAccessReader(rspecifier, "mat") as r:
        return r.keys()


def first_keys(rspecifier: str, n: int) -> Optional[list[str]]:
    """The first ``n`` keys of the table when :func:`table_keys` knows them (``head -n N`` of
    the utterance list: an utterance the chain skips is not replaced by the N+1st), else None."""
    keys = table_keys(rspecifier)
    return None if keys is None else keys[:n]


def speakers_of(rspecifier: str) -> Optional[dict[str, str]]:
    """utterance -> speaker of a pipeline with per-speaker CMVN, else None (a plain rspecifier
    does not say)."""
    if not is_pipeline(rspecifier):
        return None
    pipe = FeaturePipeline.read(rspecifier[len(PIPELINE_PREFIX):])
    if not pipe.utt2spk:
        return None
    return read_utt2spk(pipe.utt2spk)
