# Two commands do everything on a fresh machine; each builds .venv from nothing if absent.
#   make demo   -- the main job: a short private release of a bundled data set
#   make test   -- ruff + the whole test suite (Spark tests in local mode: needs Java 17)
#   make test-quick -- the inner loop: skips tests marked slow (never a privacy check)
#   make docs   -- the guides and the API reference as HTML in docs/_build/html (warnings fail)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-quick lint bench reproduce docs clean

$(STAMP): pyproject.toml setup.py $(wildcard src/dpnoise/kernels/*.c src/dpnoise/kernels/*.h)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,spark]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/dpnoise demo --report out/demo-report.html

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts

# both cores (pytest-xdist); the Spark tests share one worker and one local SparkSession
PYTEST := $(BIN)/python -m pytest -n 2 --dist loadgroup

test: $(STAMP) lint
	$(PYTEST)

test-quick: $(STAMP) lint
	$(PYTEST) -m "not slow"

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,spark,bench]"
	$(BIN)/python benchmarks/run.py

DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,spark,docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "docs/_build/html/index.html"

reproduce: $(STAMP)
	$(BIN)/dpnoise reproduce --help

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache .hypothesis docs/_build
