"""nnetmix: Kaldi-style speech recognition recipes with data-parallel DNN training over MPI."""

__version__ = "0.1.0"
