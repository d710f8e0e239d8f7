# `make demo` and `make test` work on a fresh machine with Python 3.11 and make:
# they create .venv when it is missing and install privest into it first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast bench lint docs data clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/privest demo --output demo-output

# The suite runs on every core, at most TEST_WORKERS of them (pytest-xdist; each worker
# needs about 1.3 GB at its peak); TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= 4

test: $(STAMP)
	$(BIN)/python -m pytest -q $(if $(filter 0,$(TEST_WORKERS)),,-n auto --maxprocesses=$(TEST_WORKERS))

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" $(if $(filter 0,$(TEST_WORKERS)),,-n auto --maxprocesses=$(TEST_WORKERS))

# Benchmarks run in their own venv: the anchors' extra caps scikit-learn (see pyproject),
# which the dev extra's test pin (>= 1.8) would contradict, so it installs the bench extra only.
BENCH := .venv-bench
BENCH_STAMP := $(BENCH)/.installed

$(BENCH_STAMP): pyproject.toml
	test -x $(BENCH)/bin/python || $(PYTHON) -m venv $(BENCH)
	$(BENCH)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH)/bin/python -m pip install --quiet -e '.[bench]'
	$(BENCH)/bin/python -m pip install --quiet 'torch==2.13.0' && \
	  $(BENCH)/bin/python -m pip install --quiet -e '.[torch]' || \
	  echo "torch/opacus did not install: the DP-SGD anchor will be skipped"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BENCH)/bin/python benchmarks/run_all.py

# The API reference from the docstrings (pdoc, offline): HTML in build/docs/, not committed.
# One page per module listed here and their submodules (each package's __all__ applies).
API_MODULES := privest privest.accounting privest.audit privest.datasets privest.errors \
	privest.experiments privest.learn privest.mechanisms privest.models privest.noise \
	privest.release privest.rng privest.validation

docs: $(STAMP)
	rm -rf build/docs
	$(BIN)/python -m pdoc --docformat numpy --output-directory build/docs $(API_MODULES)
	@echo "API reference: build/docs/index.html"

# Package data computed once: the logistic loss's truncation-bias table (paper 004, App. D.7).
data: $(STAMP)
	$(BIN)/python -c "from privest.learn.weierstrass import write_order_table as w; print(w())"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) $(BENCH) demo-output .pytest_cache build src/*.egg-info
