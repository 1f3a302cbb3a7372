"""CD-1 on the cuda backend against the cpu backend: on numba's CUDA simulator (test_rbm_cuda_sim.py
runs this file in a subprocess, since NUMBA_ENABLE_CUDASIM must be set before numba loads; the
file name keeps the outer pytest from collecting it) or on a real GPU (make test-gpu). Tiny
shapes: the simulator runs every GPU thread as a Python thread."""
import numpy as np
import pytest

from nnetmix.kernels import get_backend
from nnetmix.rbm import Cd1
from helpers import tiny_rbm

pytestmark = pytest.mark.cuda_device


@pytest.mark.parametrize("types,scale", [(("bern", "bern"), 0.5), (("gauss", "bern"), 0.5),
                                         (("gauss", "bern"), 5.0), (("bern", "gauss"), 0.5)])
def test_cd1_cuda_matches_cpu(types, scale):
    rng = np.random.default_rng(4)
    base = tiny_rbm(rng, 3, 4, *types, scale=scale)
    nets = {n: base.concat().to_backend(get_backend(n), np.float64) for n in ("cpu", "cuda")}
    cd1 = {n: Cd1(nets[n], 0.2, 0.7, 0.01) for n in nets}
    guarded = []
    for _ in range(2):
        v = rng.standard_normal((5, 3)) * 0.3 if types[0] == "gauss" else rng.random((5, 3))
        u = rng.random((5, 4)) if types[1] == "bern" else rng.standard_normal((5, 4))
        res = {n: cd1[n].step(v, uniforms=u) for n in nets}
        assert res["cpu"].guarded == res["cuda"].guarded
        guarded.append(res["cpu"].guarded)
        np.testing.assert_allclose(res["cuda"].mse, res["cpu"].mse, rtol=1e-10)
        np.testing.assert_allclose(nets["cuda"]._host(nets["cuda"].params),
                                   nets["cpu"].params, rtol=1e-10, atol=1e-12)
    if scale > 1:
        assert guarded[0]   # the guard path runs on cuda too
