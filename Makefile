# Two entry points for people: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv and installs the package with its dev extra on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench install clean local-llm local-llm-demo

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,cli]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/langgraph-context demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	./scripts/ensure-postgres.sh
	./scripts/ensure-bubblewrap.sh
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# Opt-in, plumbing only (see docs/local-llm.md): build llama-server once into the cache
# (~13 min on 2 cores), then serve SmolLM2-135M on 127.0.0.1:8088. Never run by CI.
local-llm: $(STAMP)
	PYTHON=$(BIN)/python ./scripts/local-llm.sh serve

# The demo on that server (start `make local-llm` in another terminal first).
local-llm-demo: $(STAMP)
	eval "$$(./scripts/local-llm.sh env)" && $(BIN)/langgraph-context demo --base-url "$$LGC_BASE_URL" --model "$$LGC_MODEL"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
