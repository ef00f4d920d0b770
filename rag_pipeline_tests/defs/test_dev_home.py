"""`make dev` keeps Dagster's home in the configuration's state folder (issue 27, item 6): the UI
writes .nux/, logs and compute logs there, never into the checkout, and serves the project's
instance settings (PostgreSQL storage, queue limits, run monitoring)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "scripts" / "dagster_home.sh"


def _home(config: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(PROJECT_ROOT)}
    return subprocess.run(["bash", str(SCRIPT), str(config)], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def _checkout_files() -> set[str]:
    listed = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, check=False).stdout
    return set(listed.splitlines())


def test_dev_home_is_the_state_folders_and_holds_the_projects_instance_settings(tmp_path: Path) -> None:
    config = tmp_path / "conf" / "rag_pipeline.yaml"
    config.parent.mkdir()
    config.write_text("state_dir: ./state\nsources:\n  - {name: docs, kind: filesystem, path: ./docs}\n")
    before = _checkout_files()
    done = _home(config)
    assert done.returncode == 0, done.stderr
    home = Path(done.stdout.strip())
    assert home == (tmp_path / "conf" / "state" / "dagster-ui").resolve()  # relative to the config file
    assert (home / "dagster.yaml").read_text() == (PROJECT_ROOT / "dagster.yaml").read_text()
    assert _home(config).stdout.strip() == str(home)  # idempotent: a second `make dev` reuses it
    assert _checkout_files() == before


def test_dev_home_of_a_broken_configuration_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "rag_pipeline.yaml"
    config.write_text("state_dir: [unclosed\n")
    done = _home(config)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.startswith("scripts/dagster_home.sh: ") and "rag_pipeline.yaml" in done.stderr
    assert "Traceback" not in done.stderr
