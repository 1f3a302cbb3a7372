"""Corpus preparation for the recipes under egs/ whose corpora come from LDC releases.

The Switchboard recipe (egs/swbd/s5, Kaldi's egs/swbd/s5c stages): Switchboard-1 Release 2
training data (:mod:`~nnetmix.recipes.swbd_train`, words mapped by
:mod:`~nnetmix.recipes.swbd_text`), the ms98 dictionary (:mod:`~nnetmix.recipes.swbd_dict`),
Hub5'00 evaluation data (:mod:`~nnetmix.recipes.eval2000`), hub5 scoring filters
(:mod:`~nnetmix.recipes.hub5_score`) and Kaldi's duplicate-transcript limit
(:mod:`~nnetmix.recipes.dedup`). The local/ scripts reach them through :mod:`nnetmix.recipes.cli`.
"""
from nnetmix.recipes.conversations import (CHANNELS, CorpusError, DataDirReport, Utterance,
                                           find_sph, side_wav_scp, write_conversation_data_dir)
from nnetmix.recipes.dedup import KaldiDupRandom, select_dup_limited
from nnetmix.recipes.eval2000 import (extend_segments, fix_stm_line, prepare_eval2000, read_pem,
                                      read_stm_text)
from nnetmix.recipes.hub5_score import (HESITATIONS, SUBSETS, Glm, apply_glm, hub5_filter,
                                        read_glm)
from nnetmix.recipes.swbd_dict import SILENCE_PHONES, prepare_swbd_dict, read_ms98_dict
from nnetmix.recipes.swbd_text import clean_transcript, map_word, map_words, ms98_utt_id
from nnetmix.recipes.swbd_train import prepare_swbd_train, read_ms98_transcripts

__all__ = [
    "CHANNELS", "CorpusError", "DataDirReport", "Utterance", "find_sph", "side_wav_scp",
    "write_conversation_data_dir", "KaldiDupRandom", "select_dup_limited", "extend_segments",
    "fix_stm_line", "prepare_eval2000", "read_pem", "read_stm_text", "HESITATIONS", "SUBSETS",
    "Glm", "apply_glm", "hub5_filter", "read_glm", "SILENCE_PHONES", "prepare_swbd_dict",
    "read_ms98_dict", "clean_transcript", "map_word", "map_words", "ms98_utt_id",
    "prepare_swbd_train", "read_ms98_transcripts",
]
