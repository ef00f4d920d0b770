"""The console script's quick exit (`rag_pipeline.cli.main.run`) skips only the interpreter's
module teardown: the exit code, every byte of output, atexit handlers and running threads are
kept, as a normal exit keeps them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rag_pipeline_tests.conftest import PROJECT_ROOT


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300,
                          check=False, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT), "TMP": str(tmp_path)})


def test_a_quick_exit_keeps_the_code_all_output_atexit_handlers_and_running_threads(tmp_path: Path) -> None:
    handler, thread = tmp_path / "atexit.txt", tmp_path / "thread.txt"
    code = f"""
import atexit, json, sys, threading, time
from rag_pipeline.cli.main import exit_now
atexit.register(lambda: open({str(handler)!r}, "w").write("ran"))
def late():
    time.sleep(1.0)
    open({str(thread)!r}, "w").write("finished")
threading.Thread(target=late).start()
sys.stdout.write(json.dumps({{"rows": ["x" * 100] * 5000}}))  # far more than a pipe buffer holds
sys.stderr.write("said on stderr")
exit_now(3)
"""
    done = _python(code, tmp_path)
    assert done.returncode == 3, done.stderr
    assert len(json.loads(done.stdout)["rows"]) == 5000
    assert done.stderr.endswith("said on stderr")
    assert handler.read_text() == "ran" and thread.read_text() == "finished"


def test_the_module_entry_point_keeps_the_usage_error_exit_code_and_message(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "rag_pipeline.cli.main", "search", "--groups", "g",
                           "--config", str(tmp_path / "none.yaml")],
                          capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300, check=False)
    assert done.returncode == 2
    assert "give either a QUERY or --queries" in done.stderr


def test_an_error_escaping_main_still_exits_non_zero_with_its_traceback(tmp_path: Path) -> None:
    code = """
import sys
import rag_pipeline.cli.main
cli = sys.modules["rag_pipeline.cli.main"]  # the package exports a function of the same name
def broken(argv=None):
    raise RuntimeError("unexpected failure inside a command")
cli.main = broken
cli.run()
"""
    done = _python(code, tmp_path)
    assert done.returncode == 1
    assert "RuntimeError: unexpected failure inside a command" in done.stderr
