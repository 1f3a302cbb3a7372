"""GMM-HMM: lang directory, monophone training, alignment, graphs and decoding.

Submodules are imported on use (kaldi_hmm_gmm must be imported before kaldifst). ``khg`` bridges
nnetmix.kaldi's model objects and kaldi-hmm-gmm 1.1.4's (its docstring maps what 1.1.4 binds).
"""

__all__ = ["khg", "graphs", "gmm_tools", "align_tools", "gmm_align", "gmm_init", "gmm_likelihood",
           "gmm_mixup", "gmm_stats", "gmm_update", "h_transducer", "convert_ali"]
