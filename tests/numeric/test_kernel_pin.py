"""Kernel pinning: numpy, OpenBLAS and numba use the x86-64-v3 code on any CPU, a user's setting
wins, and a process that loaded numpy first says so."""
import os
import subprocess
import sys

import pytest

from nnetmix.kernel_pin import PINS, cpu_supports_pins

pytestmark = pytest.mark.skipif(not cpu_supports_pins(), reason="not an x86-64 CPU with AVX2")

PROBE = """
import sys
first = sys.argv[1]
if first == "numpy":
    import numpy
import nnetmix, numba, numpy as np
from nnetmix.kernel_pin import kernel_settings
from numba import njit

@njit(fastmath=True)
def sumsq(x):
    t = np.float32(0)
    for i in range(x.shape[0]):
        t += x[i] * x[i]
    return t

x = np.random.default_rng(0).standard_normal(100003)
print(kernel_settings())
print(numba.config.CPU_NAME, repr(sumsq(x.astype(np.float32))), np.exp(x * 20).sum().hex())
"""


def _probe(env_extra: dict, first: str = "nnetmix") -> list[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in PINS and not k.startswith("NNETMIX_")}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", PROBE, first], env=env, text=True,
                         capture_output=True, check=True).stdout
    return out.splitlines()


def test_importing_nnetmix_pins_the_kernels():
    settings, result = _probe({})
    assert settings.startswith("pin=pinned") and "OPENBLAS_CORETYPE='Haswell'" in settings
    assert result.split()[0] == "haswell"
    # the same numbers as with the variables set by hand before Python starts
    by_hand = _probe({**PINS, "NNETMIX_PIN_KERNELS": "false"})[1]
    assert result == by_hand


def test_a_users_setting_wins_and_pinning_can_be_turned_off():
    settings, _ = _probe({"OPENBLAS_CORETYPE": "Zen"})
    assert "OPENBLAS_CORETYPE='Zen'" in settings and "NUMBA_CPU_NAME='haswell'" in settings
    settings, result = _probe({"NNETMIX_PIN_KERNELS": "false"})
    assert settings.startswith("pin=off") and "OPENBLAS_CORETYPE='(unset)'" in settings
    assert result.split()[0] == "None"


def test_numpy_loaded_first_is_reported():
    settings, _ = _probe({}, first="numpy")
    assert settings.startswith("pin=late")


THREADS_PROBE = """
import hashlib, sys
import numba, numpy as np
from nnetmix.kernels import cpu_kernels as K
from nnetmix.kernels.cpu import CpuBackend
assert numba.get_num_threads() == int(sys.argv[1])
rng = np.random.default_rng(0)
x = rng.standard_normal((1000, 67)).astype(np.float32)
t = rng.integers(0, 67, 1000).astype(np.int32)
be = CpuBackend()
out = np.zeros(67, dtype=np.float32)
be.sum_rows(x, out)
loss, correct = K.softmax_xent_k(x.copy(), t, np.empty_like(x), np.empty_like(x))
print(hashlib.md5(out.tobytes()).hexdigest(), repr(loss), correct)
"""


def test_cpu_kernels_give_the_same_bits_for_any_thread_count():
    """Column sums and the cross-entropy loss: 1, 2 and 3 numba threads, the same bits (the
    row blocks and the loss's order are fixed, not per thread)."""
    outs = {subprocess.run([sys.executable, "-c", THREADS_PROBE, str(n)], text=True,
                           capture_output=True, check=True,
                           env={**os.environ, "NUMBA_NUM_THREADS": str(n)}).stdout
            for n in (1, 2, 3)}
    assert len(outs) == 1, outs
