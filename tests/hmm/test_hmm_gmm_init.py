"""gmm-init-mono's global mean/variance and train_mono.sh's schedule."""
import numpy as np
import pytest

from nnetmix.errors import FormatError
from nnetmix.hmm.gmm_init import TrainMonoSchedule, global_mean_var, init_mono_gmms


def test_global_mean_var_and_init():
    rng = np.random.default_rng(8)
    mats = [rng.normal(2.0, 3.0, (n, 4)) for n in (50, 70, 30)]
    mean, var, count = global_mean_var(mats)
    allx = np.concatenate(mats)
    assert count == 150
    np.testing.assert_allclose(mean, allx.mean(0))
    np.testing.assert_allclose(var, allx.var(0))
    gmms = init_mono_gmms(5, mean, var)
    assert len(gmms) == 5 and all(len(g.weights) == 1 and g.weights[0] == 1 for g in gmms)
    with pytest.raises(FormatError):
        global_mean_var([np.ones((3, 2))])
    with pytest.raises(FormatError):
        global_mean_var([])


def test_train_mono_schedule():
    s = TrainMonoSchedule()
    n = s.numgauss(127)
    inc = (1000 - 127) // 30
    assert n[0] == n[1] == 127 and n[2] == 127 + inc and n[31] == 127 + 30 * inc == n[39]
    assert sum(s.realign(x) for x in range(1, 40)) == 21
    assert s.beam(1) == 6 and s.beam(2) == 10 and s.power == 0.25
