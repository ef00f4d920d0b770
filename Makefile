# First commands on a fresh machine (only Python 3.11 needed):
#   make demo   set up, sync the demo corpus on the embedded defaults, show a search
#   make test   set up, run the test suite (what .ci/run calls)
VENV := .venv
BIN := $(VENV)/bin
DEMO := demo/rag_pipeline.yaml
export HF_HUB_OFFLINE := 1
export UNSTRUCTURED_DISABLE_NOTICE := 1
export TOKENIZERS_PARALLELISM := false
export DAGSTER_HOME := $(CURDIR)

.PHONY: setup demo test dev bench clean-demo

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml scripts/setup.sh scripts/install_spacy_model.sh
	bash scripts/setup.sh
	touch $@

demo: setup
	bash scripts/demo.sh

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest rag_pipeline_tests

dev: setup
	$(BIN)/dagster dev -w workspace.yaml

bench: setup
	$(BIN)/python bench/bench_parse.py --no-scanned

clean-demo:
	rm -rf demo/.rag_pipeline demo/.state
