# Two entry points, each doing its own set-up in a local virtual environment (.venv):
#   make main   the main job: a few minutes of self-play training on Meier (runs/meier/)
#   make test   lint, type check and the whole test suite
# torch is installed first as `torch==2.13.0` (a CPU build on these machines), so that the
# package's own `torch` range never pulls a newer build with CUDA.

VENV ?= .venv
PY := $(VENV)/bin/python
GGP := $(VENV)/bin/ggp

.PHONY: setup main test lint bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test]'
	# The native extensions (C: the propnet kernel, the search loops; built once into
	# ~/.cache/ggp; Python is the fallback).
	$(PY) -m ggp.reasoning.kernel
	$(PY) -c 'from ggp.search.classic.native import main; main()'
	# Optional: OpenSpiel, for the comparison test and benchmark (skipped without it).
	$(PY) -m pip install -q --disable-pip-version-check 'open_spiel==2.0.2' || echo "open_spiel not installed: its comparisons will be skipped"
	touch $@

main: setup
	$(GGP) train games/meier.gdl --out runs/meier --fresh

lint: setup
	$(PY) -m ruff check ggp tests benchmarks
	$(PY) -m ruff format --check ggp tests benchmarks
	$(PY) -m mypy

test: lint
	$(PY) -m pytest

bench: setup
	$(PY) benchmarks/bench_parser.py
	$(PY) benchmarks/bench_propnet.py
	$(PY) benchmarks/bench_grounding.py
	$(PY) benchmarks/bench_search.py
	$(PY) benchmarks/bench_protocol.py
	$(PY) benchmarks/bench_classic.py
	$(PY) benchmarks/bench_rtmm.py
	$(PY) benchmarks/bench_mcts_drop.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
