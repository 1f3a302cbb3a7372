"""Scoring: word error rate in compute-wer's format, best-WER selection, the LM-weight sweep.

:func:`compute_wer` + :func:`format_wer` are bin/compute-wer.py; :func:`best_wer_line` is
utils/best_wer.sh; :func:`score_sweep` is the lattice-free part of local/score.sh;
:func:`compare_tables` and :func:`compare_decode_dirs` (MAPSSWE and bootstrap intervals,
:mod:`nnetmix.score.significance`) are bin/compare-wer.py.
"""
from nnetmix.score.best import best_wer_line, parse_wer_line
from nnetmix.score.compare import BestScoring, CompareOptions, Comparison, best_scoring, \
    compare_decode_dirs, compare_systems, compare_tables, format_comparison, write_comparison_json
from nnetmix.score.significance import Bootstrap, Interval, Mapsswe, bootstrap, format_p, \
    mapsswe, sclite_segments
from nnetmix.score.sweep import DEFAULT_HYP_PATTERN, SweepResult, lmwt_range, score_sweep
from nnetmix.score.texttable import iter_token_table, read_token_table
from nnetmix.score.wer import MODES, ScoreError, WerStats, align_ops, compute_wer, edit_distance, \
    format_wer

__all__ = [
    "best_wer_line", "parse_wer_line", "DEFAULT_HYP_PATTERN", "SweepResult", "lmwt_range",
    "score_sweep", "iter_token_table", "read_token_table", "MODES", "ScoreError", "WerStats",
    "compute_wer", "edit_distance", "format_wer", "align_ops", "BestScoring", "CompareOptions",
    "Comparison", "best_scoring", "compare_decode_dirs", "compare_systems", "compare_tables",
    "format_comparison", "write_comparison_json", "Bootstrap", "Interval", "Mapsswe", "bootstrap",
    "mapsswe", "sclite_segments", "format_p",
]
