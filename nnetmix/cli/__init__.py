"""The command-line layer: what bin/ tools (and only they) import to turn argv into library calls.

Nothing in the library imports this package (tests/test_layers.py checks it): library modules
take typed arguments and option dataclasses (:mod:`nnetmix.options`), and raise named errors;
these modules parse command lines, print usage, set up Kaldi logging and turn errors into exit
codes. Three conventions, one module each:

* :mod:`nnetmix.cli.binary` -- Kaldi binaries (``--name=value``, ``ERROR (...)`` lines): almost
  every bin/ tool.
* :mod:`nnetmix.cli.script` -- Kaldi's utils/ scripts (``--name value``, ``prog: message`` lines):
  the bin/ tools behind utils/validate_data_dir.sh, utils/prepare_lang.sh, ...
* :mod:`nnetmix.cli.srilm` -- SRILM's ``-name value``: bin/ngram-count.py and bin/ngram.py.

:mod:`nnetmix.cli.features` is the command line compute-mfcc-feats.py and compute-fbank-feats.py
share; :mod:`nnetmix.cli.interrupt` makes Ctrl-C one ERROR line and exit status 130.
"""
from nnetmix.cli.interrupt import guard_imports

guard_imports()  # first: a Ctrl-C during the tool's imports is one line, not a traceback

from nnetmix.cli.binary import OptionParser, run_tool, str2bool  # noqa: E402

__all__ = ["OptionParser", "run_tool", "str2bool"]
