"""The experiment campaign (issue 31): the seeds' claims settled on a task's recipe.

bench/campaign.py is the command; :mod:`spec` holds the typed run and benchmark specs and the
plan files, :mod:`tasks` what each task's recipe runs, :mod:`prereqs` the prerequisites and
their fingerprint, :mod:`campaign` the driver loop, :mod:`benches` the benchmark entries,
:mod:`collect` and :mod:`store` what a finished run leaves in ``bench/results/<task>/``,
:mod:`campaign_tables` and :mod:`campaign_plots` the tables written from the store alone.
:mod:`plan` lists the seed groups' roles, :mod:`stored` finds the stored run of each role,
:mod:`verdict` holds the rules that decide each claim, and one module per seed
(:mod:`seed000`, :mod:`seed001`, :mod:`seed002`, :mod:`seed004`) states its claims.
"""
