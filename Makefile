# Two commands on a fresh machine: `make run` (the student page on localhost) and `make test`.
# Each installs what it needs first; a second call finds it installed and goes straight on.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
KIT := $(VENV)/bin/meteor-kit
PORT ?= 8000

.PHONY: run test test-full test-debian test-plain test-newest-hypothesis setup system check web

# Builds the student's page if an input changed, and serves it on localhost (Ctrl+C stops it).
run: setup
	$(KIT) serve --port $(PORT)

# In two parts: the tests that bear another's load on both cores (-n 2; the modules sharing a
# costly fixture stay on one worker: --dist loadgroup), then the timing-sensitive ones alone, as
# before (`serial`: tests/conftest.py). Both parts always run; either failing fails the target.
PYTEST := $(VENV)/bin/python -m pytest tests -q --durations=10
WORKERS := -n 2 --dist loadgroup
PARALLEL := $(WORKERS) -m "not serial"
test: setup web
	@status=0; $(PYTEST) $(PARALLEL) || status=1; $(PYTEST) -m serial || status=1; exit $$status

# The same, with the slow catalogue-wide equality checks on every catalogue file instead of a
# fixed sample (tests/test_replay.py, in the parallel part): about 3 minutes more.
test-full: setup web
	@status=0; export KIT_FULL_CATALOGUE=1; $(PYTEST) $(PARALLEL) || status=1; $(PYTEST) -m serial || status=1; exit $$status

# The plain path is the reference (docs/architecture.md): a copy of the kit with the memoized side
# (grader/judging/memoized) deleted, and with it the import contract that guards it, passes every
# test but the memo's own (tests/test_memo_*.py and the tests marked `memoized`). CI runs the
# parallel part this way (the serial part, timing-sensitive, would add 7 minutes).
PLAIN := build/plain-kit
test-plain: setup web
	rm -rf $(PLAIN) && mkdir -p $(PLAIN) && chmod 755 $(PLAIN)
	tar -c --exclude=./.git --exclude=./.venv --exclude='./.venv-*' --exclude=./build --exclude=./web/node_modules . | tar -x -C $(PLAIN)
	ln -s $(CURDIR)/$(VENV) $(PLAIN)/$(VENV)
	rm -r $(PLAIN)/grader/judging/memoized
	sed -i '/^# The memo is an acceleration behind one seam/,/^allowed_importers = \["grader.judging.grade"\]/d' $(PLAIN)/pyproject.toml
	cd $(PLAIN) && PYTHONPATH=$$PWD $(CURDIR)/$(VENV)/bin/python -m pytest tests -q -p no:cacheprovider $(WORKERS) -m "not serial and not memoized" $(addprefix --ignore=,$(wildcard tests/test_memo_*.py))

# The suite once more with the newest hypothesis on PyPI (CI runs it): replay does not know that
# version, says so once and steps aside, and every verdict stays as it was. Left out: the tests that
# need the locked version (`pinned_hypothesis`: replay's own, golden files in its wording).
NEWEST := build/venv-newest-hypothesis
test-newest-hypothesis: setup web
	rm -rf $(NEWEST) && $(PYTHON) -m venv $(NEWEST)
	$(NEWEST)/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
	$(NEWEST)/bin/pip install -q --disable-pip-version-check --upgrade hypothesis
	$(NEWEST)/bin/pip install -q --disable-pip-version-check --no-deps -e .
	@$(NEWEST)/bin/python -c 'import hypothesis; print("hypothesis", hypothesis.__version__)'
	$(NEWEST)/bin/python -m pytest tests -q -p no:cacheprovider $(WORKERS) -m "not serial and not pinned_hypothesis"

# The sandbox and the hostile corpus again under Debian's own Python (a venv of /usr/bin/python3.11:
# dist-packages, no site-packages), where the jail must still be bubblewrap.
DEBIAN_VENV := .venv-debian
test-debian: system $(DEBIAN_VENV)/.installed
	$(DEBIAN_VENV)/bin/python -m pytest tests/test_sandbox.py tests/test_cells.py tests/test_wire.py tests/test_grade_hostile.py tests/test_neighbours.py -q

$(DEBIAN_VENV)/.installed: pyproject.toml requirements.lock
	/usr/bin/python3.11 -m venv $(DEBIAN_VENV)
	$(DEBIAN_VENV)/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
	$(DEBIAN_VENV)/bin/pip install -q --disable-pip-version-check --no-deps -e .
	touch $@

# The page's static site in build/web: npm ci, the hash-checked test wheels, the build itself.
web: setup
	$(KIT) build-web --if-needed

setup: system $(VENV)/.installed

# What a fresh Debian 12 lacks: the commands (bubblewrap for the jail, Chromium for the page's
# tests, Node and npm for its build), ensurepip for `python3.11 -m venv` (packaged apart), and
# libseccomp for the jail's filter (pyseccomp loads it; Debian usually has it, through apt).
# As root they are installed; anyone else is told every missing one and how to install it.
system:
	@missing=""; \
	for pair in bwrap:bubblewrap chromium:chromium node:nodejs npm:npm; do \
	  command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair##*:}"; \
	done; \
	for python in $(PYTHON) /usr/bin/python3.11; do \
	  $$python -c 'import ensurepip' 2>/dev/null || { missing="$$missing python3.11-venv"; break; }; \
	done; \
	/sbin/ldconfig -p | grep -q 'libseccomp\.so\.2 ' || missing="$$missing libseccomp2"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "missing Debian packages:$$missing"; \
	    echo "install them as root, then run make again:"; \
	    echo "  sudo apt-get install$$missing"; \
	    echo "or, without sudo (root's password):"; \
	    echo "  su -c 'apt-get install$$missing'"; \
	    exit 1; \
	  fi; \
	fi

$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps -e .
	touch $@
