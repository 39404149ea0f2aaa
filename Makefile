# The two commands the README starts with. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint selfcheck clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "== gate check examples/ (the example orchestrator has the teardown bug; exit 1 is expected)"
	-$(BIN)/gate check examples/

test: $(STAMP)
	$(BIN)/python -m pytest
	$(MAKE) --no-print-directory lint selfcheck

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

selfcheck: $(STAMP)
	$(BIN)/gate check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .gate_cache
