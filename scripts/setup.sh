#!/usr/bin/env bash
# Everything a fresh machine needs besides Python 3.11: a project virtualenv with the locked
# dependencies, the offline spaCy model unstructured wants, Tesseract for OCR and Redis (the
# broker of the Celery-executor test and of a Celery deployment), both from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
export PIP_DISABLE_PIP_VERSION_CHECK=1
.venv/bin/python -m pip install -q --upgrade pip wheel
# torch==2.13.0 is a CPU build; a bare 'torch' would pull a multi-GB CUDA build.
.venv/bin/python -m pip install -q -r requirements.lock
.venv/bin/python -m pip install -q --no-deps -e .
PYTHON=.venv/bin/python bash scripts/install_spacy_model.sh
if ! command -v tesseract >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Tesseract OCR from Debian's packages"
    packages="tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $packages >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $packages >/dev/null; } \
      || echo "warning: Tesseract not installed; pages without a text layer will be reported, not OCRed" >&2
  else
    echo "warning: Tesseract not found (apt-get install tesseract-ocr); scanned pages will be reported, not OCRed" >&2
  fi
fi
if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing redis-server from Debian's packages (the Celery executor's broker in tests)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null; } \
      || echo "warning: redis-server not installed; the Celery-executor test will fail (apt-get install redis-server)" >&2
  else
    echo "warning: redis-server not found (apt-get install redis-server); the Celery-executor test needs it" >&2
  fi
fi
if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium and chromium-driver from Debian's packages (the review screen's browser test)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null; } \
      || echo "warning: chromium not installed; the review screen's browser test will fail (apt-get install chromium chromium-driver)" >&2
  else
    echo "warning: chromium/chromedriver not found (apt-get install chromium chromium-driver); the review screen's browser test needs them" >&2
  fi
fi
# Morphological dictionaries for Czech, Slovak, Polish, Croatian and Slovenian full-text search
# (migration 029): Debian's Hunspell packages, converted into the embedded server's share folder.
hunspell="hunspell-cs hunspell-sk hunspell-pl hunspell-hr hunspell-sl"
if ! dpkg -s $hunspell >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Hunspell dictionaries from Debian's packages (full-text morphology of cs, sk, pl, hr, sl)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $hunspell >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $hunspell >/dev/null; } \
      || echo "warning: Hunspell dictionaries not installed; Czech, Slovak, ... documents are indexed without morphology" >&2
  else
    echo "warning: Hunspell dictionaries not found (apt-get install $hunspell); Czech, Slovak, ... documents are indexed without morphology" >&2
  fi
fi
.venv/bin/python -m rag_pipeline.store.text_dictionaries
# The encoder's one-off work on this machine (which backend matches torch fp32 fastest, the ONNX
# export it measures), remembered in the user's cache: done here, not by the first sync.
HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false .venv/bin/python -m rag_pipeline.embedding.prepare \
  || echo "warning: the encoder was not prepared; the first sync prepares it (tens of seconds more)" >&2
echo "setup done: .venv ready"
