"""Kaldi tables and objects: rspecifiers/wspecifiers, ark/scp readers and writers, pipes.

Every other part of nnetmix reads and writes Kaldi data through here. Kinds: ``mat`` (2-D
float32/float64; compressed CM/CM2/CM3 read as float32, written from a
``Compressed(matrix, method)`` value), ``vec`` (1-D float), ``ivec`` (int32
vector, e.g. alignments), ``post`` (posteriors: frames of (id, weight) pairs), ``pairvec``
((N, 2) float32: Kaldi's float-pair vectors, e.g. lattice-mbr-decode's word times), ``gpost``
(Gaussian-level posteriors: frames of (id, float32 vector) pairs, gmm-post-to-gpost's tables),
``float`` (one number per key: scale-post's scales).

    with SequentialReader("ark:gunzip -c ali.1.gz |", "ivec") as r:
        for key, ali in r: ...
    with TableWriter("ark,scp:feats.ark,feats.scp") as w:
        w[key] = feats
"""
from nnetmix.errors import FormatError
from nnetmix.kaldi.codec import KINDS
from nnetmix.kaldi.compressed import Compressed
from nnetmix.kaldi.errors import KaldiIOError, TableKeyError
from nnetmix.kaldi.objects import read_object, write_object
from nnetmix.kaldi.specifier import (RSpecifier, WSpecifier, classify_rxfilename,
                                     classify_wxfilename, parse_rspecifier, parse_wspecifier)
from nnetmix.kaldi.stream import InputStream, OutputSink, open_input, open_output
from nnetmix.kaldi.table import RandomAccessReader, SequentialReader
from nnetmix.kaldi.writer import TableWriter

__all__ = [
    "KINDS", "Compressed", "RSpecifier", "WSpecifier", "parse_rspecifier", "parse_wspecifier",
    "classify_rxfilename", "classify_wxfilename",
    "SequentialReader", "RandomAccessReader", "TableWriter", "read_object", "write_object",
    "InputStream", "OutputSink", "open_input", "open_output",
    "FormatError", "KaldiIOError", "TableKeyError",
]

# Kaldi model files: topology, transition model, GMMs (.mdl), tree.
from nnetmix.kaldi.hmm_topology import (HmmState, HmmTopology, default_topology,  # noqa: E402
                                        read_topology_text, write_topology_text)
from nnetmix.kaldi.context_dep import (ContextDependency, monophone_context_dependency,  # noqa: E402
                                       read_tree, write_tree)
from nnetmix.kaldi.transition_model import (TransitionModel, read_transition_model,  # noqa: E402
                                            write_transition_model)
from nnetmix.kaldi.diag_gmm import AmDiagGmm, DiagGmm, read_gmm_model, write_gmm_model  # noqa: E402

__all__ += [
    "HmmState", "HmmTopology", "default_topology", "read_topology_text", "write_topology_text",
    "ContextDependency", "monophone_context_dependency", "read_tree", "write_tree",
    "TransitionModel", "read_transition_model", "write_transition_model",
    "DiagGmm", "AmDiagGmm", "read_gmm_model", "write_gmm_model",
]
