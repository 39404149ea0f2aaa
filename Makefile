# The two commands the README starts with. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint selfcheck pythons clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "== gate check examples/ (the example orchestrator has the teardown bug; exit 1 is expected)"
	-$(BIN)/gate check examples/
	@echo
	@echo "== gate seams: a cancel and an exception at every await seam of Orchestrator.run"
	-$(BIN)/gate seams examples/scenario.py:buggy --check examples/scenario.py:check
	@echo
	@echo "== the same sweep of Orchestrator.run_fixed, which holds the interrupt and re-raises it"
	$(BIN)/gate seams examples/scenario.py:fixed --check examples/scenario.py:check

test: $(STAMP)
	$(BIN)/python -m pytest
	$(MAKE) --no-print-directory lint selfcheck pythons

# The seam harness on every CPython 3.10-3.13 that pyenv has here.
pythons:
	bash .ci/harness-pythons

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

selfcheck: $(STAMP)
	$(BIN)/gate check .

clean:
	rm -rf $(VENV) .venv-3.* .pytest_cache .ruff_cache .hypothesis .gate_cache
