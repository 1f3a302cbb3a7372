"""Test objects for the GMM code, built in code: random GMMs, a tiny topology/lexicon/graph."""
from __future__ import annotations

import kaldi_hmm_gmm as khg  # before kaldifst: the other order can hang
import kaldifst
import numpy as np

from nnetmix.hmm.gmm_likelihood import GmmParams

# phone 1: silence (3 emitting states, any-to-any as Kaldi's silence), phones 2, 3: 3-state
# left-to-right; probabilities as utils/gen_topo.pl writes them.
TOPO = """<Topology>
<TopologyEntry>
<ForPhones>
2 3
</ForPhones>
<State> 0 <PdfClass> 0 <Transition> 0 0.75 <Transition> 1 0.25 </State>
<State> 1 <PdfClass> 1 <Transition> 1 0.75 <Transition> 2 0.25 </State>
<State> 2 <PdfClass> 2 <Transition> 2 0.75 <Transition> 3 0.25 </State>
<State> 3 </State>
</TopologyEntry>
<TopologyEntry>
<ForPhones>
1
</ForPhones>
<State> 0 <PdfClass> 0 <Transition> 0 0.5 <Transition> 1 0.25 <Transition> 2 0.25 </State>
<State> 1 <PdfClass> 1 <Transition> 1 0.5 <Transition> 2 0.5 </State>
<State> 2 <PdfClass> 2 <Transition> 2 0.75 <Transition> 3 0.25 </State>
<State> 3 </State>
</TopologyEntry>
</Topology>
"""


def random_gmms(rng: np.random.Generator, num_pdfs: int, dim: int, max_k: int = 4) -> list:
    out = []
    for _ in range(num_pdfs):
        k = int(rng.integers(1, max_k + 1))
        w = rng.uniform(0.2, 1.0, k)
        out.append(GmmParams(w / w.sum(), rng.normal(0, 2, (k, dim)),
                             rng.uniform(0.3, 2.0, (k, dim))))
    return out


def gmm_loglike_ref(gmm, x: np.ndarray) -> np.ndarray:
    """(K,) weighted log-likelihoods of one frame, the textbook way, float64."""
    out = np.zeros(len(gmm.weights))
    for k in range(len(gmm.weights)):
        s = np.log(gmm.weights[k])
        for d in range(len(x)):
            v = gmm.vars[k, d]
            s += -0.5 * np.log(2 * np.pi * v) - 0.5 * (x[d] - gmm.means[k, d]) ** 2 / v
        out[k] = s
    return out


class TinyLang:
    """Topology, monophone tree, transition model and lexicon FST for 3 phones, 2 words."""

    def __init__(self):
        self.topo = khg.HmmTopology()
        self.topo.read(TOPO)
        self.ctx = khg.monophone_context_dependency(list(self.topo.phones),
                                                   self.topo.get_phone_to_num_pdf_classes())
        self.tm = khg.TransitionModel(self.ctx, self.topo)
        n = self.tm.num_transition_ids
        self.tid2pdf = np.array([-1] + [self.tm.transition_id_to_pdf(t) for t in range(1, n + 1)])
        self.is_self_loop = np.array([False] + [self.tm.is_self_loop(t) for t in range(1, n + 1)])
        self.id2state = np.asarray(self.tm.id2state, dtype=np.int64)
        self.log_probs = np.asarray(self.tm.log_probs, dtype=np.float64)
        # words: 1 = phone 2; 2 = phones 3 2; optional silence (phone 1) before each word
        lex = kaldifst.StdVectorFst()
        s0 = lex.add_state()
        lex.start = s0
        lex.set_final(s0, 0.0)
        for word, phones in ((1, [2]), (2, [3, 2])):
            prev = s0
            for i, p in enumerate(phones):
                nxt = s0 if i == len(phones) - 1 else lex.add_state()
                lex.add_arc(prev, kaldifst.StdArc(p, word if i == 0 else 0, 0.0, nxt))
                prev = nxt
        self.lex = lex
        self.compiler = khg.TrainingGraphCompiler(self.tm, self.ctx, lex, [],
                                                  khg.TrainingGraphCompilerOptions())

    def graph(self, words):
        return self.compiler.compile_graph_from_text(list(words))

    def state_tids(self, phone: int, hmm_state: int) -> tuple[int, int]:
        """(forward transition-id, self-loop transition-id) of a left-to-right phone state."""
        fwd = loop = 0
        for t in range(1, len(self.tid2pdf)):
            if self.tm.transition_id_to_phone(t) != phone:
                continue
            if self._hmm_state(phone, self.id2state[t]) != hmm_state:
                continue
            if self.is_self_loop[t]:
                loop = t
            elif fwd == 0:
                fwd = t
        return fwd, loop

    def _hmm_state(self, phone: int, tstate: int) -> int:
        # tuples are sorted by (phone, hmm-state) and each emitting state is one tstate here
        first = min(self.id2state[t] for t in range(1, len(self.tid2pdf))
                    if self.tm.transition_id_to_phone(t) == phone)
        return int(tstate - first)
