# The two commands the README starts with. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint selfcheck pythons bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The fixed copy of the examples lives in build/ (ignored by git, ruff and gate's self-check).
DEMO_FIXED := build/demo-fixed

demo: $(STAMP)
	@echo "== gate check examples/ (the example orchestrator has the teardown bug; exit 1 is expected)"
	-$(BIN)/gate check examples/
	@echo
	@echo "== adopting gate on a copy of it, ruff = true: baseline today's findings; then new code fails alone (exit 1 expected)"
	@demo=$$(mktemp -d) && gate=$(abspath $(BIN))/gate && cd $$demo && \
	cp $(CURDIR)/examples/orchestrator.py . && \
	printf '[tool.gate]\nruff = true\n\n[tool.ruff.lint]\nexternal = ["GATE"]\n' > pyproject.toml && \
	$$gate baseline update | grep written && $$gate check && \
	printf '\n\nasync def upload(job):\n    import sys\n\n    try:\n        await job.run()\n    finally:\n        await job.flush()\n        job.write_result()\n' >> orchestrator.py && \
	$$gate check; cd /; rm -rf $$demo
	@echo
	@echo "== gate seams: a cancel and an exception at every await seam of Orchestrator.run"
	-$(BIN)/gate seams examples/scenario.py:buggy --check examples/scenario.py:check
	@echo
	@echo "== gate check --show-fixes examples/: the rewrite gate proposes (nothing is written)"
	-$(BIN)/gate check --show-fixes examples/
	@echo
	@echo "== gate check --fix on a copy in $(DEMO_FIXED)/, then the same sweep of the fixed Orchestrator.run"
	@rm -rf $(DEMO_FIXED) && mkdir -p build && cp -r examples $(DEMO_FIXED)
	-$(BIN)/gate check --fix $(DEMO_FIXED)/
	$(BIN)/gate seams $(DEMO_FIXED)/scenario.py:buggy --check $(DEMO_FIXED)/scenario.py:check

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

# gate against ruff, xenon, radon and flake8-async on a tree of your choice: make bench TREE=path
# gate's bytecode is compiled first, as installing a package does (an editable install under
# PYTHONDONTWRITEBYTECODE=1 would otherwise compile gate's sources again on every run).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python -m compileall -q gate
	$(BIN)/python benchmarks/compare.py $(TREE) $(BENCHFLAGS)

clean:
	rm -rf $(VENV) .venv-3.* .pytest_cache .ruff_cache .hypothesis .gate_cache
