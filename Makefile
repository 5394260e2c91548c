# Two commands on a fresh machine: `make run` (the student page on localhost) and `make test`.
# Each installs what it needs first; a second call finds it installed and goes straight on.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
KIT := $(VENV)/bin/meteor-kit
PORT ?= 8000

.PHONY: run test setup system check

run: setup
	$(KIT) check solutions/reference.py

test: setup
	$(VENV)/bin/python -m pytest tests -q

setup: system $(VENV)/.installed

system:
	@missing=""; \
	for pair in bwrap:bubblewrap; do \
	  command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair##*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "missing Debian packages:$$missing (run: sudo apt-get install$$missing)"; exit 1; \
	  fi; \
	fi

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@
