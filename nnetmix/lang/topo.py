"""The HMM topology text (data/lang/topo) as Kaldi's utils/gen_topo.pl writes it.

Non-silence phones: a left-to-right chain of ``num_nonsil_states`` emitting states, each with a
0.75 self-loop and 0.25 forward transition, then a non-emitting final state. Silence phones, for
three or more states: state 0 reaches every state but the last emitting one, the middle states
are fully connected among themselves and to the last emitting state, which leaves with 0.25
(probabilities 1/(n-1)); for one state, a 0.75 self-loop and 0.25 exit. Written here as text so
the text itself comes from nnetmix.kaldi.hmm_topology (one generator for the lang directory and
the model code); this module adds prepare_lang.sh's option checks.
"""
from __future__ import annotations

from typing import Sequence

from nnetmix.kaldi.hmm_topology import default_topology_text
from nnetmix.lang.symbols import LangError

__all__ = ["make_topo"]


def make_topo(num_nonsil_states: int, num_sil_states: int, nonsil_phones: Sequence[int],
              sil_phones: Sequence[int]) -> str:
    """The topology text for the given integer phone ids (one-line LangError on bad counts)."""
    if not 1 <= num_nonsil_states <= 100:
        raise LangError(f"--num-nonsil-states must be 1 to 100, got {num_nonsil_states}")
    if not (num_sil_states == 1 or 3 <= num_sil_states <= 100):
        raise LangError(f"--num-sil-states must be 1 or 3 to 100, got {num_sil_states}")
    if not nonsil_phones or not sil_phones:
        raise LangError("the topology needs at least one silence and one non-silence phone")
    return default_topology_text([*nonsil_phones, *sil_phones], sil_phones,
                                 num_nonsil_states, num_sil_states)
