"""cuBLAS sgemm/dgemm called through ctypes on our own handle, bound to the backend's stream.

Why not CuPy's wrapper: CuPy refuses any cuBLAS call while a stream is being captured
("calling cuBLAS API during stream capture is currently unsupported", CuPy 14), so a training
step holding GEMMs could not become a CUDA graph; and its call plus the three zero-copy views of
numba arrays costs about 86 µs of Python per GEMM on an H100 (bench/cuda_launch.py), more than a
small layer's GEMM takes on the GPU. cuBLAS itself supports capture. The library is the one CuPy
already loaded (found in /proc/self/maps after CuPy's first cuBLAS call), else the one
``ctypes.util.find_library`` names. The handle gets a fixed workspace, so cuBLAS allocates
nothing inside a capture.

Layout: our arrays are row-major; cuBLAS is column-major. A row-major (r, c) matrix with row
stride ld is the column-major (c, r) matrix with leading dimension ld, i.e. its transpose. So
C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: the operands swap, the transpose flags
stay, and m, n swap.
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

__all__ = ["Cublas", "CublasError", "load_cublas"]

_OP_N, _OP_T = 0, 1
_WORKSPACE = 32 << 20  # bytes; what PyTorch gives a handle on Hopper for graph-safe GEMMs


class CublasError(RuntimeError):
    """A cuBLAS call returned a status other than CUBLAS_STATUS_SUCCESS."""


def _loaded_cublas_path() -> str | None:
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip().split(" ")[-1]
                if "/libcublas.so" in path:
                    return path
    except OSError:
        pass
    return None


def load_cublas(cupy) -> ctypes.CDLL:
    """The libcublas this process uses (CuPy's), opened through ctypes."""
    cupy.cuda.device.get_cublas_handle()  # makes CuPy load its libcublas
    path = _loaded_cublas_path() or ctypes.util.find_library("cublas")
    if path is None:
        raise CublasError("libcublas is not loaded and not on the library path")
    lib = ctypes.CDLL(path)
    vp, i = ctypes.c_void_p, ctypes.c_int
    for name, scalar in (("cublasSgemm_v2", ctypes.c_float), ("cublasDgemm_v2", ctypes.c_double)):
        fn = getattr(lib, name)
        fn.argtypes = [vp, i, i, i, i, i, ctypes.POINTER(scalar), vp, i, vp, i,
                       ctypes.POINTER(scalar), vp, i]
        fn.restype = i
    lib.cublasCreate_v2.argtypes = [ctypes.POINTER(vp)]
    lib.cublasSetStream_v2.argtypes = [vp, vp]
    lib.cublasSetWorkspace_v2.argtypes = [vp, vp, ctypes.c_size_t]
    return lib


def _check(status: int, what: str) -> None:
    if status != 0:
        raise CublasError(f"{what} failed with cuBLAS status {status}")


def _ptr(a) -> int:
    return a.device_ctypes_pointer.value or 0


def _row_stride(a) -> int | None:
    """Leading dimension (elements) of a 2-D array with unit column stride, else None."""
    item = a.dtype.itemsize
    s0, s1 = a.strides
    if a.shape[1] > 1 and s1 != item:
        return None
    return max(s0 // item, a.shape[1], 1) if a.shape[0] > 1 else max(a.shape[1], 1)


class Cublas:
    """One cuBLAS handle on one stream; ``gemm`` as Backend.gemm on numba device arrays."""

    def __init__(self, cupy, stream_ptr: int, workspace) -> None:
        self.lib = load_cublas(cupy)
        self.handle = ctypes.c_void_p()
        _check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        _check(self.lib.cublasSetStream_v2(self.handle, ctypes.c_void_p(stream_ptr)),
               "cublasSetStream")
        self.workspace = workspace  # kept alive as long as the handle uses it
        _check(self.lib.cublasSetWorkspace_v2(self.handle, ctypes.c_void_p(_ptr(workspace)),
                                              workspace.nbytes), "cublasSetWorkspace")

    def supports(self, *arrays) -> bool:
        """True when every array is 2-D with unit column stride (what ``gemm`` maps)."""
        return all(len(a.shape) == 2 and _row_stride(a) is not None for a in arrays)

    def gemm(self, a, b, out, trans_a: bool, trans_b: bool, alpha: float, beta: float) -> None:
        m, n = out.shape
        k = a.shape[0] if trans_a else a.shape[1]
        if m == 0 or n == 0:
            return
        if np.dtype(out.dtype) == np.float32:
            fn, scalar = self.lib.cublasSgemm_v2, ctypes.c_float
        else:
            fn, scalar = self.lib.cublasDgemm_v2, ctypes.c_double
        al, be = scalar(alpha), scalar(beta)
        _check(fn(self.handle, _OP_T if trans_b else _OP_N, _OP_T if trans_a else _OP_N,
                  n, m, k, ctypes.byref(al), _ptr(b), _row_stride(b), _ptr(a), _row_stride(a),
                  ctypes.byref(be), _ptr(out), _row_stride(out)), "cublas gemm")

    @staticmethod
    def workspace_bytes() -> int:
        return _WORKSPACE
