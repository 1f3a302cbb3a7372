# nnetmix: the two set-up commands are `make demo` (the egs/digits recipe end to end) and
# `make test` (the test suite). Both install what they need first; `make install` alone is
# idempotent and quiet when nothing is missing.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.nnetmix-installed
BENCH_STAMP := $(VENV)/.nnetmix-bench-installed
# the numba kernels compiled into their on-disk cache once (nnetmix/driver/warmup.py); an edited
# source file's kernels are compiled again by the first process that calls them
WARM_STAMP := $(VENV)/.nnetmix-kernels-compiled
DEBIAN := espeak-ng sox
# make test only: tests/cluster starts a one-node Slurm (slurm-wlm, munge) and two network-namespace
# hosts (iproute2, util-linux: ip, unshare) with these (skipped without them)
DEBIAN_TEST := slurm-wlm munge iproute2 util-linux
# make test's pytest processes (pytest-xdist); each test file stays in one (tests/conftest.py)
TEST_JOBS ?= 2

.PHONY: install bytecode debian-deps demo test test-gpu bench docs clean

install: $(STAMP) $(WARM_STAMP) bytecode debian-deps

$(STAMP): setup.py
	@test -x $(PY) || python3 -m venv $(VENV)
	@echo "make: installing nnetmix and its pinned dependencies into $(VENV) (log: $(VENV)/install.log)"
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[test]' > $(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log; echo "make: pip install failed, see $(VENV)/install.log" >&2; exit 1; }
	@touch $@

$(WARM_STAMP): $(STAMP)
	@echo "make: compiling the numba kernels into their cache, 2 processes (log: $(VENV)/warmup.log)"
	@$(PY) -m nnetmix.driver.warmup --jobs=2 > $(VENV)/warmup.log 2>&1 \
	  || { cat $(VENV)/warmup.log; echo "make: the kernel warm-up failed, see $(VENV)/warmup.log" >&2; exit 1; }
	@touch $@

# nnetmix's modules compiled into __pycache__/ (only changed files again): a recipe starts
# thousands of short tool processes, and where PYTHONDONTWRITEBYTECODE is set (containers, CI)
# Python writes no bytecode, so each would compile the modules it imports from source, about a
# third of a GMM tool's start-up (tests/test_tool_startup.py)
bytecode: $(STAMP)
	@$(PY) -m compileall -q nnetmix bin/_require_nnetmix

# the bench targets' plots need matplotlib (the optional bench extra); make test does not
$(BENCH_STAMP): $(STAMP)
	@echo "make: installing the bench extra (matplotlib) into $(VENV) (log: $(VENV)/install.log)"
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[test,bench]' > $(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log; echo "make: pip install failed, see $(VENV)/install.log" >&2; exit 1; }
	@touch $@

debian-deps:
	@utils/install_debian_deps.sh $(DEBIAN)

demo: install
	cd egs/digits/s5 && ./run.sh

test: install
	@utils/install_debian_deps.sh $(DEBIAN_TEST) || echo "make: the Slurm and multi-host tests will be skipped"
	$(PY) -m pytest -q -rs -n $(TEST_JOBS) --dist loadgroup tests

# the CUDA checks against a real GPU (make test runs them on numba's simulator)
test-gpu: install
	$(PY) -m pytest -q tests/kernels/cuda_checks.py tests/ngsgd/ngsgd_cuda_checks.py \
	  tests/rbm/rbm_cuda_checks.py tests/parallel_train/ptrain_cuda_checks.py \
	  tests/nnet/lstm_cuda_checks.py tests/nnet/prelu_dropout_cuda_checks.py

bench: install $(BENCH_STAMP)
	$(PY) bench/campaign.py --plan bench/plans/speed.toml --commit false

# the experiment campaign (docs/experiments.md): make campaign PLAN=bench/plans/harbour.toml
PLAN ?= bench/plans/harbour.toml
CAMPAIGN_OPTS ?=
campaign: install $(BENCH_STAMP)
	$(PY) bench/campaign.py --plan $(PLAN) $(CAMPAIGN_OPTS)

# the documentation site (mkdocs.yml) into site/, warnings as errors; the tools reference pages
# are regenerated first from the tools' --help (docs/gen_tools.py)
docs: install
	$(PY) docs/gen_tools.py
	$(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) build *.egg-info
