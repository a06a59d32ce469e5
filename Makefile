# StateAct developer targets. `make setup` prepares a fresh Debian machine (as root); `make test` runs the tests.
PYTHON ?= python3

.PHONY: setup engine install images demo test test-fast bench lint format

setup: engine install images

engine:
	bash .ci/install-engine.sh

install:
	$(PYTHON) -m pip install -q -e '.[dev]'

images:
	stateact image build base desktop

demo:
	stateact suite tasks/suites/longhorizon --demo --out runs/demo

test:
	$(PYTHON) -m pytest -q -ra

test-fast:
	$(PYTHON) -m pytest -q -ra -m "not slow"

bench:
	$(PYTHON) -m bench

lint:
	ruff check . && ruff format --check .

format:
	ruff check --fix . && ruff format .
