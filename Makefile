# codebot: `make install` sets everything up, `make test` runs the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
NODE_DIR := tests/node
CONFORMANCE_DIR := tests/conformance

.DEFAULT_GOAL := help
.PHONY: helper help install test test-fast conformance lint docs format typecheck demo bench clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ {printf "  \033[36m%-10s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

install: ## Create .venv with codebot and the dev tools, the npm MCP servers the tests use, the conformance suite
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# editable: cli/, core/ and mcpbridge/ are mapped under codebot_mcp (pyproject's package-dir)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# the exec helper every child starts through (parent-death signal, the sandbox): C, built here
	$(MAKE) --no-print-directory helper
	cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	# the MCP conformance suite and the Node 22 it needs, both pinned, inside the project
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@echo "installed: run $(BIN)/codebot --help (or activate $(VENV))"

helper: core/proc/codebot-exec ## Build the exec helper (core/proc/exec_helper.c) with the system's C compiler

# static where the C library allows it (no dynamic loader at each start: about 1 ms less)
core/proc/codebot-exec: core/proc/exec_helper.c
	$(CC) -O2 -Wall -Wextra -static -o $@ $< 2>/dev/null || $(CC) -O2 -Wall -Wextra -o $@ $<

# Bytecode first: with PYTHONDONTWRITEBYTECODE set (CI machines) every codebot and test-server
# process of the suite would otherwise compile its modules from source again (a fresh clone has none).
BYTECODE := $(BIN)/python -m compileall -q cli core mcpbridge tests
# pytest rewrites the asserts of every test module it imports, and keeps the result only where
# bytecode may be written: PYTEST runs it with that allowed. Without the cache each of the six
# workers rewrites all ~140 test modules again (about 4 s of CPU each), so two collections side
# by side fill it first (about 5 s; a second run finds it filled).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest
ASSERTS := $(PYTEST) --collect-only -q tests/cli tests/e2e tests/hostile >/dev/null 2>&1 & \
	$(PYTEST) --collect-only -q tests --ignore=tests/cli --ignore=tests/e2e --ignore=tests/hostile \
	>/dev/null 2>&1; wait

test: ## Run the test suite (the 25 slowest tests are named at the end)
	$(BYTECODE)
	$(ASSERTS)
	$(PYTEST) -n 6 -q --durations=25

# The inner loop: unit and in-process tests only (no server subprocess per test), under a minute.
FAST_TESTS := tests/core tests/test_settings.py tests/test_load.py tests/test_packaging.py \
	tests/test_docs.py tests/mcpbridge/test_naming.py tests/mcpbridge/test_capability.py \
	tests/mcpbridge/test_manager_inproc.py tests/doctor/test_units.py tests/test_imports.py

test-fast: ## The fast tier: unit and in-process tests, for the inner loop (under a minute)
	$(BYTECODE)
	$(PYTEST) -n 4 -q $(FAST_TESTS)

conformance: ## The official MCP conformance suite's client scenarios, run against codebot's CLI
	$(BIN)/python -m tests.conformance.run $(ARGS)

lint: ## ruff (format and lint), the layers (import-linter's contracts in pyproject.toml), mypy
	$(BIN)/ruff format --check cli core mcpbridge tests examples
	$(BIN)/ruff check cli core mcpbridge tests examples
	$(BIN)/lint-imports --no-cache
	@mkdir -p build/typecheck/codebot_mcp
	@for p in cli core mcpbridge; do ln -sfn ../../../$$p build/typecheck/codebot_mcp/$$p; done
	$(BIN)/mypy

docs: ## Regenerate the settings models' table, schema, the command reference (docs/reference.md); build the site, strict
	$(BIN)/python -m codebot_mcp.core.config.tablegen > core/config/keytable.py.new
	mv core/config/keytable.py.new core/config/keytable.py
	$(BIN)/python -m codebot_mcp.core.config.keys > docs/settings.schema.json
	$(BIN)/python -m tests.docs_reference --write
	$(BIN)/mkdocs build --strict --quiet


format: ## Format the code and apply safe lint fixes
	$(BIN)/ruff format cli core mcpbridge tests examples
	$(BIN)/ruff check --fix cli core mcpbridge tests examples

# `make demo CODEBOT=/path/to/codebot` runs the demo through another install (pipx, uv tool, CI);
# the demo server runs on that codebot's own interpreter (${CODEBOT_PYTHON} in its settings).
CODEBOT ?= $(BIN)/codebot

demo: ## Offline demo: list and call the tools of examples/demo's MCP server
	$(CODEBOT) --cwd examples/demo --trust-project mcp list
	$(CODEBOT) --cwd examples/demo --trust-project mcp call notes add_note text="hello from make demo"
	$(CODEBOT) --cwd examples/demo --trust-project mcp call notes roll_dice sides=20
	$(CODEBOT) --cwd examples/demo --trust-project mcp doctor

bench: ## Benchmarks: codebot against the raw SDK; tool search, compaction and own time per turn (8-10); the sandbox's cost per bash call (15), with a domain list (20); ACP against stream-json (21); telemetry (22)
	$(BIN)/python -m tests.bench

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) core/proc/codebot-exec $(NODE_DIR)/node_modules $(CONFORMANCE_DIR)/node_modules $(CONFORMANCE_DIR)/results .pytest_cache .mypy_cache .ruff_cache
