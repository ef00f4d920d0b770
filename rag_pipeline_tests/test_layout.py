"""The layering of DESIGN.md holds: the core knows nothing of Dagster, every import points down the
data flow (sources -> parsing -> cleaning -> chunking -> embedding -> store -> retrieval -> evaluation,
then config, sync, Dagster, CLI), no modules import each other in a circle, the package root holds
only its entry points, the package installs with its migrations and every package folder ships."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "rag_pipeline"
INTERFACE_AND_ORCHESTRATION = ("rag_pipeline.defs", "rag_pipeline.cli", "rag_pipeline.definitions")


# Rooms of the package, lowest first. A module imports only from its own room and from rooms of
# lower layers; rooms of one layer know nothing of each other.
LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer) for layer in (
    {"errors", "common", "rag_pipeline"},  # the error root, what every layer uses, package metadata
    {"sources", "blobs", "parsing", "embedding", "store", "alerts"},  # independent stages, the store, alerting
    {"cleaning"},
    {"chunking"},
    {"retrieval"},
    {"answers"},  # citations of generated answers checked against the logged search
    {"review"},  # people decide on flagged and rejected answers
    {"evaluation"},
    {"config"},  # composes each layer's own section model
    {"sync", "migration"},  # a sync; a model migration (evaluates both models, switches)
    {"defs", "definitions"},  # orchestration
    {"web"},  # the review screen (HTTP)
    {"cli"},  # interface
))
ROOT_MODULES = {"__init__", "config", "errors", "definitions"}
MAX_CORE_MODULE_LINES = 400


def _module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str) -> str:
    """`rag_pipeline.store.search` -> store; `rag_pipeline.config` -> config; the package -> rag_pipeline."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _layer(room: str) -> int:
    for i, layer in enumerate(LAYERS):
        if room in layer:
            return i
    raise AssertionError(f"room {room!r} has no layer in test_layout.LAYERS: place it in the data flow")


def _imports() -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports, at the top or inside a
    function alike (a lazy import is a dependency all the same)."""
    paths = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
                if base.startswith("rag_pipeline"):
                    targets |= {f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names}
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith("rag_pipeline")}
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def test_every_import_points_down_the_layers() -> None:
    wrong = []
    for module, targets in _imports().items():
        for target in targets:
            here, there = _room(module), _room(target)
            if here != there and not _layer(there) < _layer(here):
                wrong.append(f"{module} imports {target} ({there} is not below {here})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = _imports()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_the_package_root_holds_only_its_entry_points() -> None:
    loose = {p.stem for p in PACKAGE.glob("*.py")} - ROOT_MODULES
    assert not loose, f"move into the room of their stage: {sorted(loose)}"
    assert len(list(PACKAGE.glob("*.py"))) <= 5


def test_no_core_module_grows_past_its_size() -> None:
    core = [p for p in PACKAGE.rglob("*.py") if not _module_name(p).startswith(INTERFACE_AND_ORCHESTRATION)]
    long = {str(p.relative_to(PROJECT_ROOT)): n for p in core if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_CORE_MODULE_LINES}
    assert not long, f"split by what each part does: {long}"


def test_the_layer_check_sees_a_lazy_upward_import(tmp_path: Path) -> None:
    """The checks above would pass vacuously if the import scan missed imports: it must see a
    function-level import and a relative one."""
    graph = _imports()
    assert "rag_pipeline.blobs.s3" in graph["rag_pipeline.blobs"]  # imported inside open_blob_store
    assert "rag_pipeline.store.runs" in graph["rag_pipeline.sync.parse"] or any(
        t.startswith("rag_pipeline.store") for t in graph["rag_pipeline.sync.parse"])
    assert _layer(_room("rag_pipeline.store.search")) < _layer(_room("rag_pipeline.retrieval.search"))


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
