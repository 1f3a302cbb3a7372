"""nnetmix.driver.warmup: after the warm-up's decoding part, a decode of another graph and
model (the digits-sized test system, in a new process) loads every decoder kernel from the cache
and compiles none. NUMBA_CACHE_DIR points both processes at an empty temporary cache, so the
repository's own __pycache__ plays no part."""
import json
import os
import subprocess
import sys

from helpers import ROOT

DECODE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from helpers import digits_system, random_gmms
from nnetmix.decode.decoder import LatticeDecoder, LatticeDecoderConfig
from nnetmix.decode.gmmframes import GmmFrames, OnDemandGmm
from nnetmix.driver.warmup import cache_counts
tm, _tree, hclg, _keep, _ = digits_system()
rng = np.random.default_rng(1)
gmm = OnDemandGmm(random_gmms(rng, tm.num_pdfs, 13))
feats = rng.normal(size=(50, 13)).astype(np.float32)
dec = LatticeDecoder(hclg, tm, LatticeDecoderConfig(allow_partial=True, acoustic_scale=0.083333))
for on_demand in (True, False):
    dec.decode(GmmFrames(gmm, feats, on_demand), "u1")
dec.decode(rng.normal(size=(50, tm.num_pdfs)).astype(np.float32), "u2", lattice=False)
print(json.dumps(cache_counts(["nnetmix.decode.faster", "nnetmix.decode.detlat",
                               "nnetmix.hmm.gmm_likelihood"])))
"""


def test_decode_after_warmup_compiles_nothing(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-m", "nnetmix.driver.warmup", "--part=decoding"], env=env,
                   cwd=ROOT, check=True)
    out = subprocess.run([sys.executable, "-c", DECODE, str(ROOT / "tests")], env=env, cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    counts = json.loads(out.splitlines()[-1])
    # the search, the determinization and the dense likelihoods were all called ...
    for name in ("nnetmix.decode.faster._search", "nnetmix.decode.faster.best_path_arcs",
                 "nnetmix.decode.detlat.determinize_arrays",
                 "nnetmix.hmm.gmm_likelihood._segment_lse"):
        assert counts.get(name, (0, 0))[0] > 0, (name, counts)
    # ... and every one came from the cache
    assert {k: v for k, v in counts.items() if v[1]} == {}
