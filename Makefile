# StateAct developer targets. `make setup demo` prepares a fresh Debian machine (as root) and runs the
# demo; `make test` runs the tests. Everything Python lives in a virtual environment (.venv), so the
# system Python is never touched (Debian marks it externally managed).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: setup engine host-tools install images demo test test-fast bench lint format

setup: engine host-tools install images

engine:
	bash .ci/install-engine.sh

# Debian tools the checkers run on the host (Tesseract for OCR, ffmpeg for videos).
host-tools:
	bash .ci/install-host-tools.sh

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev,ray]'
	touch $(INSTALLED)

install: $(INSTALLED)

# osworld2 (OSWorld 2.0's applications on the desktop image) is built for its own tests; cached by
# its hash like the others.
images: $(INSTALLED)
	$(BIN)/stateact image build base desktop osworld2

demo: $(INSTALLED)
	$(BIN)/stateact suite tasks/suites/longhorizon --demo --out runs/demo

test: $(INSTALLED)
	$(BIN)/python -m pytest -q -ra --durations=40

test-fast: $(INSTALLED)
	$(BIN)/python -m pytest -q -ra -m "not slow"

bench: $(INSTALLED)
	$(BIN)/python -m bench

# Style, then the layering: import contracts (pyproject's [tool.importlinter]) and no function-level
# import across layer units; no import circle, no function over 80 lines or 6 parameters
# (.ci/structure.py); then shellcheck on the shell scripts (installed by .ci/install-engine.sh).
lint: $(INSTALLED)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/python .ci/function_imports.py
	$(BIN)/python .ci/structure.py
	git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck

format: $(INSTALLED)
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .
