"""Compute backends: ``get_backend("cpu"|"cuda"|"auto")`` and GPU binding for MPI ranks.

One backend object per name per process (it holds scratch buffers and, on cuda, the device
binding). ``auto`` means cuda when a real GPU is usable and cpu otherwise; the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) does not count for ``auto`` (it is for tests: ask for ``cuda``).
"""
from __future__ import annotations

import os

from ..errors import NnetmixError, UsageError
from .backend import Backend

__all__ = ["Backend", "get_backend", "bind_device", "local_rank", "cuda_usable"]

_INSTANCES: dict[str, Backend] = {}
_NAMES = ("cpu", "cuda", "auto")


def cuda_usable(allow_simulator: bool = True) -> tuple[bool, str]:
    """(True, "") when numba.cuda can run kernels here, else (False, the reason)."""
    try:
        from numba import config, cuda
    except Exception as e:  # numba without its CUDA target (e.g. numba-cuda not installed)
        return False, f"numba.cuda cannot be imported ({e}; pip install numba-cuda)"
    if config.ENABLE_CUDASIM:
        return (True, "") if allow_simulator else (False, "only the CUDA simulator is enabled")
    if "numba_cuda" not in (getattr(cuda, "__file__", "") or ""):
        # numba's own, deprecated CUDA target: on an H100 it failed to compile our softmax
        # kernel (a TypeError in type inference) where numba-cuda compiles every kernel
        return False, ("numba.cuda is numba's built-in CUDA target, not the numba-cuda package "
                       "(pip install numba-cuda, or nnetmix[gpu])")
    try:
        if cuda.is_available() and len(cuda.gpus) > 0:
            return True, ""
    except Exception as e:
        return False, f"CUDA driver error: {e}"
    return False, "numba.cuda.is_available() is False (no GPU or no CUDA driver)"


def get_backend(name: str = "auto") -> Backend:
    """The process-wide backend called name: 'cpu', 'cuda' or 'auto'.

    Raises UsageError for an unknown name and NnetmixError when 'cuda' is asked for and no GPU
    can be used (the message says why and what to do).
    """
    if name not in _NAMES:
        raise UsageError(f"get_backend: unknown backend '{name}' (expected one of {', '.join(_NAMES)})")
    if name == "auto":
        name = "cuda" if cuda_usable(allow_simulator=False)[0] else "cpu"
    if name in _INSTANCES:
        return _INSTANCES[name]
    if name == "cpu":
        from .cpu import CpuBackend
        backend: Backend = CpuBackend()
    else:
        ok, why = cuda_usable()
        if not ok:
            raise NnetmixError(f"get_backend: cuda backend requested but not usable: {why} "
                               "(use the cpu backend, or NUMBA_ENABLE_CUDASIM=1 for the simulator)")
        from .cuda import CudaBackend
        backend = CudaBackend()
    _INSTANCES[name] = backend
    return backend


def local_rank(comm=None) -> int:
    """This process's rank among the ranks on its node.

    From the launcher's environment (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, Slurm's SLURM_LOCALID,
    MPICH/MVAPICH's MPI_LOCALRANKID / MV2_COMM_WORLD_LOCAL_RANK), else from comm split by shared
    memory (MPI_COMM_TYPE_SHARED) when an mpi4py communicator is given, else 0.
    """
    for var in ("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                "MV2_COMM_WORLD_LOCAL_RANK"):
        value = os.environ.get(var)
        if value is not None and value.strip().isdigit():
            return int(value)
    if comm is not None:
        from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when MPI is used
        node = comm.Split_type(MPI.COMM_TYPE_SHARED)
        try:
            return node.Get_rank()
        finally:
            node.Free()
    return 0


def bind_device(local_rank_: int | None = None, comm=None) -> int:
    """Bind this process to GPU (local rank mod number of GPUs); returns the device id.

    Call before the first CUDA work of the process (numba binds a context on first use). The
    local rank comes from the argument, else from local_rank(comm).
    """
    ok, why = cuda_usable()
    if not ok:
        raise NnetmixError(f"bind_device: no usable GPU: {why}")
    from numba import cuda
    rank = local_rank(comm) if local_rank_ is None else int(local_rank_)
    ngpu = len(cuda.gpus)
    if ngpu == 0:
        raise NnetmixError("bind_device: no GPU visible (check CUDA_VISIBLE_DEVICES)")
    device = rank % ngpu
    cuda.select_device(device)
    return device
