"""The same bits on every x86-64 machine: pin the numeric kernels that numpy, OpenBLAS and numba
choose per CPU.

Three libraries pick their code at run time from the CPU they find, and their results differ in
the last bits between choices, which a 40-pass GMM training or a DNN epoch turns into different
models and WERs (measured on the digits recipe, see docs/reproducibility.md):

* OpenBLAS (numpy's BLAS, built ``DYNAMIC_ARCH``) uses its Haswell kernels on a Zen 5 and its
  SkylakeX kernels on a Zen 4 or an AVX-512 Xeon; ``OPENBLAS_CORETYPE=SkylakeX`` on the Zen 5
  reproduces the other machine's monophone ``final.mdl`` byte for byte.
* numpy dispatches float64 ``exp``/``log`` to AVX-512 code where the CPU has it (X86_V4) and to
  libm otherwise, and float32 ``exp``/``log``/``tanh`` to AVX2 code (X86_V3).
* numba compiles for the host CPU: on a Zen 5 a fastmath reduction uses 512-bit registers and
  sums in another order than on an AVX2 machine.
* OpenBLAS's single-precision GEMM gives other bits with one thread than with several (6 of 7
  products of the digits DNN's shapes differ between 1 and 2 threads), and how it splits the
  work depends on the cores it finds. nnetmix's parallelism is jobs and MPI ranks, as Kaldi's
  CPU jobs, so one BLAS thread per process is also the fast choice there.

:func:`pin_numeric_kernels` sets the environment variables that fix all of them to the
x86-64-v3 level (AVX2 + FMA, every x86-64 server since 2013/2017): OpenBLAS's Haswell kernels
on one thread, numpy's dispatch without the AVX-512 targets, numba's code for ``haswell``. It must run before numpy
and numba are imported, so ``nnetmix/__init__.py`` calls it (every bin/ tool imports nnetmix
first); child processes (MPI ranks, jobs) inherit the environment. A variable the user has set
is left alone, and ``NNETMIX_PIN_KERNELS=false`` turns the pinning off (for speed on AVX-512
machines: results then depend on the CPU). On other CPUs (no AVX2, not x86-64) nothing is
pinned. :func:`kernel_settings` says what is in force, for logs and the recipe fingerprint.
"""
from __future__ import annotations

import os
import platform
import sys
from typing import MutableMapping

__all__ = ["PINS", "pin_numeric_kernels", "kernel_settings", "cpu_supports_pins"]

#: the x86-64-v3 settings (variable -> value)
PINS = {
    "OPENBLAS_CORETYPE": "Haswell",
    "OPENBLAS_NUM_THREADS": "1",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "NUMBA_CPU_NAME": "haswell",
    "NUMBA_CPU_FEATURES": "",   # empty: the named CPU's own features, not the host's
}
_SWITCH = "NNETMIX_PIN_KERNELS"
_STATUS_VAR = "NNETMIX_KERNEL_PIN_STATUS"


def cpu_supports_pins(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """True on an x86-64 CPU with AVX2 and FMA (the pinned kernels would crash elsewhere)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return {"avx2", "fma"} <= flags
    except OSError:
        pass
    return False


def pin_numeric_kernels(environ: MutableMapping[str, str] = os.environ) -> str:
    """Set :data:`PINS` in ``environ`` where unset; returns the status also kept in
    ``$NNETMIX_KERNEL_PIN_STATUS``: ``pinned``, ``off`` (the user turned it off), ``late``
    (numpy or numba was imported first: this process keeps its CPU's kernels) or ``cpu``
    (no AVX2/FMA or not x86-64)."""
    if environ.get(_SWITCH, "true").lower() in ("false", "0", "no"):
        status = "off"
    elif not cpu_supports_pins():
        status = "cpu"
    else:
        inherited = all(name in environ for name in PINS)   # set before this process began
        users_numba_cpu = "NUMBA_CPU_NAME" in environ
        for name, value in PINS.items():
            if name == "NUMBA_CPU_FEATURES" and users_numba_cpu:
                continue   # the user chose numba's CPU: its features go with it
            environ.setdefault(name, value)
        late = any(m in sys.modules for m in ("numpy", "numba"))
        status = "late" if late and not inherited else "pinned"
    environ[_STATUS_VAR] = status
    return status


def kernel_settings(environ: MutableMapping[str, str] = os.environ) -> str:
    """One line for logs and fingerprints: the pin status and the value of each variable."""
    parts = [f"pin={environ.get(_STATUS_VAR, 'unknown')}"]
    parts += [f"{name}={environ.get(name, '(unset)')!r}" for name in PINS]
    return " ".join(parts)
