"""The monophone training binaries as library calls: gmm-init-mono, gmm-boost-silence,
gmm-acc-stats-ali, gmm-sum-accs, gmm-est and subset-feats (src/gmmbin/*.cc, src/featbin).

Models are Kaldi .mdl files (nnetmix.kaldi.diag_gmm); the numerics are nnetmix.hmm.gmm_*.
Statistics pass between our own jobs as :class:`~nnetmix.hmm.gmm_stats.GmmAccs` ``.npz`` files
(not Kaldi's AccumAmDiagGmm format); ``-`` and ``cmd |`` work for them as for Kaldi's, so
train_mono.sh's ``gmm-est ... "gmm-sum-accs - $dir/$x.*.acc|" $dir/$[x+1].mdl`` runs unchanged.
Log lines are Kaldi's, word for word where scripts grep them (``Overall avg like per frame``,
``objective function improvement per frame``, ``log-like improvement per frame``).
"""
from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.feat.pipeline import open_features, speakers_of
from nnetmix.feat.textio import read_utt2spk
from nnetmix.hmm.gmm_init import global_mean_var
from nnetmix.hmm.gmm_likelihood import StackedGmms
from nnetmix.hmm.gmm_mixup import mix_up
from nnetmix.hmm.gmm_stats import ACCS_FORMAT, GmmAccs, acc_stats_ali, acc_transitions
from nnetmix.hmm.gmm_update import (MleGmmOptions, MleTransitionOptions, mle_am_update,
                                    mle_transition_update)
from nnetmix.kaldi.context_dep import (monophone_context_dependency,
                                       monophone_context_dependency_shared, write_tree)
from nnetmix.kaldi.diag_gmm import AmDiagGmm, DiagGmm, read_gmm_model, write_gmm_model
from nnetmix.kaldi.hmm_topology import read_topology
from nnetmix.kaldi.specifier import classify_wxfilename
from nnetmix.kaldi.stream import open_input, open_output
from nnetmix.kaldi.table import RandomAccessReader
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.kaldi.writer import TableWriter
from nnetmix.options import option

__all__ = ["GmmModel", "read_model", "write_model", "check_feat_dim", "read_phone_sets",
           "init_mono", "pdfs_for_phones", "boost_silence", "acc_stats_ali_tables",
           "acc_stats_twofeats_tables",
           "AccCounts", "read_accs", "write_accs", "sum_accs", "EstOptions", "gmm_est",
           "subset_feats"]

logger = logging.getLogger(__name__)


# -- models ---------------------------------------------------------------------------------------
@dataclass
class GmmModel:
    """A .mdl in memory: transition model, GMMs, and the stacked form for the GEMMs."""

    tm: TransitionModel
    am: AmDiagGmm
    name: str = "model"
    _stacked: Optional[StackedGmms] = field(default=None, repr=False)

    @property
    def dim(self) -> int:
        return self.am.dim

    @property
    def stacked(self) -> StackedGmms:
        if self._stacked is None:
            self._stacked = StackedGmms.from_gmms(list(self.am))
        return self._stacked


def read_model(rxfilename: str) -> GmmModel:
    tm, am = read_gmm_model(rxfilename)
    return GmmModel(tm, am, rxfilename)


def write_model(wxfilename: str, tm: TransitionModel, gmms: Sequence, binary: bool = True) -> None:
    """Write a .mdl from GMMs given as anything with .weights/.means/.vars."""
    am = AmDiagGmm([g if isinstance(g, DiagGmm) else DiagGmm.from_means_vars(
        g.weights, g.means, g.vars) for g in gmms])
    write_gmm_model(wxfilename, tm, am, binary)


def check_feat_dim(feats: np.ndarray, model: GmmModel, key: str, rspecifier: str) -> None:
    """One-line error when features and model disagree in dimension."""
    if feats.ndim != 2 or feats.shape[1] != model.dim:
        got = feats.shape[1] if feats.ndim == 2 else feats.shape
        raise FormatError(f"features of utterance {key} in {rspecifier} have dimension {got}, "
                          f"but the model {model.name} expects {model.dim} (deltas missing or "
                          "applied twice?)")


# -- gmm-init-mono --------------------------------------------------------------------------------
def read_phone_sets(rxfilename: str) -> list[list[int]]:
    """ReadSharedPhonesList: one set of phones per line (phones/sets.int)."""
    src = open_input(rxfilename)
    try:
        text = _read_all(src).decode("utf-8", errors="replace")
    finally:
        src.close(check=False)
    sets = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            s = sorted(int(t) for t in line.split())
        except ValueError:
            raise FormatError(f"{rxfilename}:{n}: expected phone ids (integers): '{line}'") \
                from None
        if not s:
            raise FormatError(f"{rxfilename}:{n}: empty line (each line is a set of phones)")
        if len(set(s)) != len(s):
            raise FormatError(f"{rxfilename}:{n}: a phone is repeated")
        sets.append(s)
    return sets


def init_mono(topo_rx: str, dim: int, model_wx: str, tree_wx: str, train_feats: str = "",
              shared_phones_rx: str = "", binary: bool = True) -> GmmModel:
    """gmm-init-mono: one Gaussian per pdf with the global mean/variance of ``train_feats``."""
    if not 0 < dim < 10000:
        raise FormatError(f"feature dimension {dim} out of range (1..9999)")
    if train_feats:
        with open_features(train_feats) as r:
            mats = []
            for key, m in r:
                if m.shape[1] != dim:
                    raise FormatError(f"features of utterance {key} in {train_feats} have "
                                      f"dimension {m.shape[1]}, expected {dim}")
                mats.append(m)
        mean, var, count = global_mean_var(mats, train_feats)
        logger.info("Global mean and variance from %d frames of %d utterances", count, len(mats))
    else:
        mean, var = np.ones(dim), np.ones(dim)
    topo = read_topology(topo_rx)
    phones = topo.phones.tolist()
    phone2num = topo.phone_to_num_pdf_classes()
    if shared_phones_rx:
        sets = read_phone_sets(shared_phones_rx)
        missing = sorted(set(phones) - {p for s in sets for p in s})
        if missing:
            raise FormatError(f"{shared_phones_rx}: phones {missing[:5]} of the topology are in "
                              "no set")
        try:
            tree = monophone_context_dependency_shared(sets, phone2num)
        except ValueError as e:
            raise FormatError(f"{shared_phones_rx}: {e}") from None
    else:
        tree = monophone_context_dependency(phones, phone2num)
    tm = TransitionModel.build(tree, topo)
    proto = DiagGmm.from_means_vars(np.ones(1), mean[None], var[None])
    am = AmDiagGmm([DiagGmm(proto.gconsts, proto.weights, proto.means_invvars, proto.inv_vars)
                    for _ in range(tm.num_pdfs)])
    write_gmm_model(model_wx, tm, am, binary)
    write_tree(tree_wx, tree, binary)
    logger.info("Wrote %d pdfs, %d transition-ids, dim %d to %s and the tree to %s",
                tm.num_pdfs, tm.num_transition_ids, dim, model_wx, tree_wx)
    return GmmModel(tm, am, model_wx)


# -- gmm-boost-silence ----------------------------------------------------------------------------
def pdfs_for_phones(tm: TransitionModel, phones: Iterable[int]) -> tuple[list[int], bool]:
    """GetPdfsForPhones: the pdfs of these phones, and whether no other phone uses them."""
    phones = set(int(p) for p in phones)
    t = tm.tuples
    mine = np.isin(t[:, 0], list(phones))
    pdfs = set(t[mine, 2].tolist()) | set(t[mine, 3][t[mine, 3] >= 0].tolist())
    others = set(t[~mine, 2].tolist()) | set(t[~mine, 3].tolist())
    return sorted(pdfs), not (pdfs & others)


def boost_silence(model: GmmModel, phones: Sequence[int], boost: float) -> int:
    """gmm-boost-silence: scale the Gaussian weights of the phones' pdfs by ``boost`` (so their
    log-likelihoods rise by log(boost); the weights no longer sum to one, as in Kaldi)."""
    pdfs, unique = pdfs_for_phones(model.tm, phones)
    if not unique:
        logger.warning("The pdfs for the silence phones may be shared by other phones "
                       "(note: this probably does not matter.)")
    for p in pdfs:
        g = model.am[p]
        g.weights = g.weights * boost  # the setter recomputes the gconsts
    model._stacked = None
    logger.info("Boosted weights for %d pdfs, by factor of %g", len(pdfs), boost)
    return len(pdfs)


def transform_means(model: GmmModel, mat: np.ndarray) -> None:
    """gmm-transform-means: every mean mu becomes M mu (M square) or M [mu; 1] (M affine,
    dim x (dim+1)); variances are kept (an MLLT step of train_lda_mllt.sh)."""
    dim = model.dim
    mat = np.asarray(mat, dtype=np.float64)
    if mat.shape[0] != dim:
        raise FormatError(f"Transform matrix has {mat.shape[0]} rows but model has dimension "
                          f"{dim}")
    if mat.shape[1] not in (dim, dim + 1):
        raise FormatError(f"Transform matrix has {mat.shape[1]} columns but model has dimension "
                          f"{dim} (neither a linear nor an affine transform)")
    for g in model.am:
        m = g.means
        new = m @ mat[:, :dim].T
        if mat.shape[1] == dim + 1:
            new += mat[:, dim]
        g.means = new  # the setter recomputes the gconsts
    model._stacked = None


# -- gmm-acc-stats-ali ----------------------------------------------------------------------------
@dataclass
class AccCounts:
    done: int = 0
    errors: int = 0
    frames: int = 0
    tot_like: float = 0.0


def _batches(feats_rspecifier: str, ali_rspecifier: str, model: GmmModel, counts: AccCounts,
             batch_frames: int, speaker_of: Optional[dict[str, str]]
             ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Concatenated (features, transition-ids) of runs of one speaker's utterances.

    Each batch is one term of the stats' exact sum, so a batch must be the same whichever job
    reads it: a batch starts at each new speaker and after ``batch_frames`` frames counted from
    there, and data is split by speaker. Without ``speaker_of`` each utterance is a batch."""
    alis = RandomAccessReader(ali_rspecifier, "ivec")
    xs, ts, n, batch_spk = [], [], 0, None
    try:
        with open_features(feats_rspecifier) as r:
            for key, m in r:
                check_feat_dim(m, model, key, feats_rspecifier)
                ali = alis.get(key)
                if ali is None:
                    logger.warning("No alignment for utterance %s", key)
                    counts.errors += 1
                    continue
                if len(ali) != len(m):
                    logger.warning("Alignments has wrong size %d vs. %d", len(ali), len(m))
                    counts.errors += 1
                    continue
                spk = speaker_of.get(key, key) if speaker_of is not None else key
                if xs and (spk != batch_spk or n >= batch_frames):
                    yield np.concatenate(xs), np.concatenate(ts)
                    xs, ts, n = [], [], 0
                batch_spk = spk
                counts.done += 1
                xs.append(m)
                ts.append(np.asarray(ali, dtype=np.int64))
                n += len(m)
        if xs:
            yield np.concatenate(xs), np.concatenate(ts)
    finally:
        alis.close()


def acc_stats_ali_tables(model: GmmModel, feats_rspecifier: str, ali_rspecifier: str,
                         utt2spk: str = "", batch_frames: int = 200000
                         ) -> tuple[GmmAccs, AccCounts]:
    """gmm-acc-stats-ali: GMM and transition stats over aligned utterances.

    ``utt2spk`` (an rspecifier; default: the feature pipeline's) groups the utterances into
    the stats' terms by speaker (see :func:`_batches`)."""
    tm = model.tm
    accs = GmmAccs.for_model(model.stacked, tm.num_transition_ids)
    counts = AccCounts()
    speaker_of = read_utt2spk(utt2spk) if utt2spk else speakers_of(feats_rspecifier)
    for x, tids in _batches(feats_rspecifier, ali_rspecifier, model, counts, batch_frames,
                            speaker_of):
        acc_transitions(tids, accs)
        counts.tot_like += acc_stats_ali(model.stacked, x, tm.tid2pdf[tids], accs)
        counts.frames += len(tids)
    logger.info("Done %d files, %d with errors.", counts.done, counts.errors)
    logger.info("Overall avg like per frame (Gaussian only) = %g over %d frames.",
                counts.tot_like / max(counts.frames, 1), counts.frames)
    return accs, counts


def acc_stats_twofeats_tables(model: GmmModel, feats1_rspecifier: str, feats2_rspecifier: str,
                              post_rspecifier: str) -> tuple[GmmAccs, AccCounts]:
    """gmm-acc-stats-twofeats: Gaussian posteriors from the model on the first features (e.g.
    speaker-adapted), statistics of the second (e.g. speaker-independent), weighted by the
    transition-id posteriors; train_sat.sh's alignment model (final.alimdl) is estimated from
    them. Each utterance is one term of the exact sum."""
    tm = model.tm
    accs = GmmAccs.for_model(model.stacked, tm.num_transition_ids)
    counts = AccCounts()
    no_post = 0
    with _InOrderLookup(feats2_rspecifier) as feats2, \
            RandomAccessReader(post_rspecifier, "post") as posts, \
            open_features(feats1_rspecifier) as r:
        for key, m1 in r:
            check_feat_dim(m1, model, key, feats1_rspecifier)
            post = posts.get(key)
            if post is None:
                logger.warning("No posteriors for utterance %s", key)
                no_post += 1
                continue
            m2 = feats2.get(key)
            if m2 is None:
                logger.warning("For utterance %s, second features not present.", key)
                counts.errors += 1
                continue
            if len(post) != len(m1) or len(m2) != len(m1):
                logger.warning("Posterior vector has wrong size %d vs. %d (second features %d)",
                               len(post), len(m1), len(m2))
                counts.errors += 1
                continue
            frames = np.repeat(np.arange(len(post)), [len(p) for p in post])
            pairs = np.array([pair for p in post for pair in p], dtype=np.float64).reshape(-1, 2)
            tids, w = pairs[:, 0].astype(np.int64), pairs[:, 1]
            acc_transitions(tids, accs, w)
            counts.tot_like += acc_stats_ali(model.stacked, np.asarray(m1)[frames],
                                             tm.tid2pdf[tids], accs, w,
                                             stats_feats=np.asarray(m2)[frames])
            counts.frames += len(m1)
            counts.done += 1
    logger.info("Done %d files, %d with no posteriors, %d with other errors.", counts.done,
                no_post, counts.errors)
    logger.info("Overall avg like per frame (Gaussian only) = %g over %d frames.",
                counts.tot_like / max(counts.frames, 1), counts.frames)
    counts.errors += no_post
    return accs, counts


class _InOrderLookup:
    """Lookup by key in a feature table read sequentially: entries are read ahead until the key
    is found and kept until asked for, so two tables over the same utterance list (the usual
    case: one data split, two feature chains) are read in step with nothing held."""

    def __init__(self, rspecifier: str):
        self.reader = open_features(rspecifier)
        self.items = iter(self.reader)
        self.ahead: dict = {}

    def get(self, key: str):
        if key in self.ahead:
            return self.ahead.pop(key)
        for k, m in self.items:
            if k == key:
                return m
            self.ahead[k] = m
        return None

    def __enter__(self) -> "_InOrderLookup":
        return self

    def __exit__(self, *exc) -> None:
        self.reader.close()


# -- stats files ----------------------------------------------------------------------------------
def _read_all(src) -> bytes:
    parts = []
    while True:
        b = src.read(1 << 20)
        if not b:
            break
        parts.append(b)
    return b"".join(parts)


def read_accs(rxfilename: str) -> GmmAccs:
    """GmmAccs from a file, ``-`` or ``cmd |`` (npz needs seeking: read it all first)."""
    src = open_input(rxfilename)
    try:
        data = _read_all(src)
    except BaseException:
        src.close(check=False)
        raise
    src.close(check=True)  # a pipe that failed is an error here, not an empty file later
    if not data:
        raise FormatError(f"{rxfilename}: empty, expected GMM stats ({ACCS_FORMAT})")
    return GmmAccs.load(io.BytesIO(data), rxfilename)


def write_accs(wxfilename: str, accs: GmmAccs) -> None:
    wx = classify_wxfilename(wxfilename)
    if wx.kind == "file":
        accs.save(wx.path)
        return
    buf = io.BytesIO()
    accs.write_to(buf)
    sink = open_output(wxfilename)
    try:
        sink.write(buf.getvalue())
    except BaseException:
        sink.abort()
        raise
    sink.commit()


def sum_accs(out_wx: str, in_rx: Sequence[str]) -> GmmAccs:
    """gmm-sum-accs."""
    total = read_accs(in_rx[0])
    for rx in in_rx[1:]:
        total += read_accs(rx)
    write_accs(out_wx, total)
    logger.info("Summed %d stats, total count %g, avg like/frame %g", len(in_rx), total.tot_t,
                total.tot_like / max(total.tot_t, 1e-20))
    logger.info("Total count of stats is %g", float(total.occ.sum()))
    logger.info("Written stats to %s", out_wx)
    return total


# -- gmm-est --------------------------------------------------------------------------------------
@dataclass
class EstOptions:
    """gmm-est's own options (MleDiagGmmOptions and MleTransitionUpdateConfig are separate)."""

    mix_up: int = option(0, "Increase number of mixture components to this overall target.")
    min_count: float = option(20.0, "Minimum per-Gaussian count enforced while mixing up and down.")
    power: float = option(0.2, "If mixing up, power to allocate Gaussians to states.")
    perturb_factor: float = option(0.01, "While mixing up, perturb means by standard deviation "
                                   "times this factor.")
    write_occs: str = option("", "File to write pdf occupation counts to.")
    seed: int = option(777, "Seed of the random perturbation when mixing up (nnetmix addition)")


def gmm_est(model_rx: str, stats_rx: str, model_wx: str, est: EstOptions = EstOptions(),
            gmm_opts: MleGmmOptions = MleGmmOptions(),
            trans_opts: MleTransitionOptions = MleTransitionOptions(),
            binary: bool = True) -> dict:
    """gmm-est: ML update of transitions and GMMs, then mixing up; returns what it logged."""
    model = read_model(model_rx)
    accs = read_accs(stats_rx)
    tm = model.tm
    if accs.num_pdfs != model.am.num_pdfs or len(accs.trans) != tm.num_transition_ids + 1:
        raise FormatError(f"{stats_rx}: stats for {accs.num_pdfs} pdfs and "
                          f"{len(accs.trans) - 1} transition-ids, but {model_rx} has "
                          f"{model.am.num_pdfs} pdfs and {tm.num_transition_ids}")
    new_lp, t_impr, t_count = mle_transition_update(tm.log_probs, accs.trans, tm.tid2state,
                                                    trans_opts)
    tm.log_probs = new_lp.astype(np.float32)
    logger.info("Transition model update: Overall %g log-like improvement per frame over %g "
                "frames.", t_impr / max(t_count, 1e-20), t_count)
    gmms, info = mle_am_update(list(model.am), accs, gmm_opts)
    logger.info("GMM update: Overall %g objective function improvement per frame over %g "
                "frames", info.objf_change / max(info.count, 1e-20), info.count)
    avg_like = accs.tot_like / max(accs.tot_t, 1e-20)
    logger.info("GMM update: Overall avg like per frame = %g over %g frames.", avg_like,
                accs.tot_t)
    occs = accs.pdf_occs()
    if est.mix_up:
        gmms = mix_up(gmms, occs, est.mix_up, est.power, est.perturb_factor, est.min_count,
                      rng=np.random.default_rng(est.seed))
    if est.write_occs:
        sink = open_output(est.write_occs)
        sink.write(("[ " + " ".join(f"{v:g}" for v in occs.astype(np.float32)) + " ]\n")
                   .encode())
        sink.commit()
    write_model(model_wx, tm, gmms, binary)
    logger.info("Written model to %s", model_wx)
    return {"avg_like": avg_like, "frames": accs.tot_t, "objf_impr": info.objf_change,
            "count": info.count, "trans_impr": t_impr, "num_gauss": sum(len(g.weights)
                                                                         for g in gmms)}


# -- subset-feats ---------------------------------------------------------------------------------
def subset_feats(rspecifier: str, wspecifier: str, n: int = 10) -> int:
    """subset-feats --n: copy the first n utterances (all when n < 0).

    The rest of the input is read and dropped rather than the pipe closed early, so the
    feature pipeline upstream (apply-cmvn | add-deltas) ends cleanly instead of logging a
    broken pipe."""
    done = 0
    with open_features(rspecifier) as r, TableWriter(wspecifier, "mat") as w:
        for key, m in r:
            if 0 <= n <= done:
                continue
            w.write(key, m)
            done += 1
    logger.info("Copied %d feature matrices.", done)
    return done
