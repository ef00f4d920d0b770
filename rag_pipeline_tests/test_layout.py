"""The layering of DESIGN.md holds: the core knows nothing of Dagster, the package installs with
its migrations, every package folder ships."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "rag_pipeline"
INTERFACE_AND_ORCHESTRATION = ("rag_pipeline.defs", "rag_pipeline.cli", "rag_pipeline.definitions")


def _modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_no_core_module_imports_dagster_or_the_dagster_layer() -> None:
    core = [m for m in _modules() if not m.startswith(INTERFACE_AND_ORCHESTRATION)]
    assert "rag_pipeline.store.runs" in core and "rag_pipeline.sync.plan" in core
    probe = (
        "import importlib, json, sys\n"
        f"for name in {core!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'dagster' or m.startswith(('dagster.', 'rag_pipeline.defs', 'rag_pipeline.cli')))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(p.parent.relative_to(PROJECT_ROOT).parts) for p in PACKAGE.rglob("__init__.py")}
    assert folders <= listed, f"add to [tool.setuptools] packages: {sorted(folders - listed)}"


def test_an_installed_package_finds_its_migrations(tmp_path: Path) -> None:
    """A non-editable install (what a wheel gives) carries sql/ inside the package."""
    target = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target), str(PROJECT_ROOT)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    probe = ("from rag_pipeline.store.migrations import sql_dir; d = sql_dir(); "
             "print(d); print(sorted(p.name for p in (d / 'migrations').glob('*.sql')))")
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {probe}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    folder, migrations = done.stdout.strip().splitlines()
    assert Path(folder).is_relative_to(target)
    assert eval(migrations) == sorted(p.name for p in (PROJECT_ROOT / "sql" / "migrations").glob("*.sql"))
