# stealsearch: `make demo` (the package + the tour), `make test` (+ the test extras, all tests), `make bench`,
# `make docs` (the documentation site).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# two stamps, one venv: the package alone (what the demo needs), then its test and docs
# extras on top (what the suite needs); `make demo` installs only the first
RUN_STAMP := $(VENV)/.installed-run
STAMP     := $(VENV)/.installed

.PHONY: demo test bench bench-full bench-quick venv clean sshd chromium docs

venv: $(STAMP)

# (Re)install when the project's metadata changes; an editable install keeps numba's
# on-disk kernel cache next to the sources, shared by every worker process.
$(RUN_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(RUN_STAMP)

# The docs extra too: the suite builds the documentation site (tests/docs).
$(STAMP): $(RUN_STAMP)
	$(PY) -m pip install --quiet -e ".[test,docs]"
	touch $(STAMP)

demo: $(RUN_STAMP)
	$(VENV)/bin/stealsearch demo

# Two test processes (pytest-xdist, whole files to each): most tests wait on processes
# they started, so one runs while the other waits; a test that needs a steal, a kill or
# an interrupt forces it, so the suite is exact beside a busy neighbour.
TEST_PROCESSES ?= 2

test: $(STAMP) sshd chromium
	$(PY) -m pytest -q -n $(TEST_PROCESSES) --dist loadfile --durations=25 tests

# tests/deploy runs a real SSHCluster against an sshd of its own on 127.0.0.1 (started
# and ended by the test).  Debian's openssh-server provides the binary; install it when
# we may (root, apt-get) and it is missing (~15 s once); otherwise that test skips.
sshd:
	@test -x /usr/sbin/sshd || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends openssh-server >/dev/null; } ; } || \
	  echo "note: no sshd; the SSHCluster test will skip"

# tests/watch/test_page_browser.py loads the /stealsearch page in headless Chromium
# (Debian's package); installed when we may (root, apt-get) and it is missing; otherwise
# that test skips.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends chromium >/dev/null; } ; } || \
	  echo "note: no chromium; the browser test of the search page will skip"

# The benchmark sets are grids of the sweep runner (benchmarks/grids/bench*.yaml; how to
# add one: benchmarks/run_all.py).  bench: the standard set (~20-30 min on 2 cores), then
# RESULTS.md rewritten; bench-full: + clique in full, the scaling model, peers, latency
# (hours); bench-quick: every item's quick arguments in a scratch copy (the repository
# is left as it is; the folder is printed).
bench: $(STAMP)
	$(PY) -m stealsearch.benchmarks.run_all

bench-full: $(STAMP)
	$(PY) -m stealsearch.benchmarks.run_all --full

bench-quick: $(STAMP)
	$(PY) -m stealsearch.benchmarks.run_all --quick

# The documentation site (docs/: Sphinx, MyST Markdown, the PyData theme) into
# build/docs/html, warnings as errors; open build/docs/html/index.html.
docs: $(STAMP)
	$(PY) -m sphinx -W --keep-going -b html docs build/docs/html

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
