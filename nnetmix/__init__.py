"""nnetmix: Kaldi-style speech recognition recipes with data-parallel DNN training over MPI."""
from nnetmix.kernel_pin import pin_numeric_kernels as _pin

__version__ = "0.1.0"

_pin()   # before numpy and numba load: the same bits on every x86-64 machine (kernel_pin.py)
