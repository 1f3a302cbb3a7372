"""Experiment drivers of issue 9: the seeds' tables reproduced on egs/digits.

bench/run_experiments.sh orchestrates; these modules compute. :mod:`plan` says which recipe runs
each group needs (the single source of truth, shared by the orchestrator and the tables),
:mod:`results` reads what a finished run left on disk, :mod:`verdict` holds the rules that decide
whether a seed's claim held, one module per group (:mod:`seed000`, :mod:`seed001`,
:mod:`seed002`, :mod:`seed004`) writes that group's markdown table, :mod:`combined` joins them.
"""
