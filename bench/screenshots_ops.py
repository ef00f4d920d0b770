"""Screenshots of what an ops engineer sees (issue 27), taken in headless Chromium against the
real Dagster webserver and daemon on loopback: a source's asset page (its history of sync
outcomes), its `fresh` check failing, and a failed run that sent an alert to a webhook receiver
on loopback. Written to docs/screenshots/ops-*.png, which the README shows.

The scene: the demo documents as source `handbook` (scheduled daily at 02:00, alerts to the
receiver), a sync launched as the Launchpad does whose plan fails on a broken access file (the
daemon's `alert_on_failed_sync_runs` posts the alert), and the freshness sensor evaluated once
with the source first seen eight days ago and never synced (what the daemon's tick records
every 5 minutes; evaluated here directly so the scene needs no 5-minute wait).

    python bench/screenshots_ops.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "rag_pipeline_tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import dagster as dg  # noqa: E402
from alert_receivers import webhook_receiver  # noqa: E402
from dagster_stack import dagster_stack  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

from rag_pipeline.store import database  # noqa: E402

SCREENSHOTS = ROOT / "docs" / "screenshots"
SOURCE = "handbook"


def _browser(profile: Path) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1500,1000", f"--user-data-dir={profile}"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"), options=options)


def _shoot(browser: webdriver.Chrome, url: str, name: str, settle: float = 8.0) -> None:
    browser.get(url)
    time.sleep(settle)  # the UI renders from GraphQL after load
    path = SCREENSHOTS / name
    browser.save_screenshot(str(path))
    print(f"wrote {path.relative_to(ROOT)} ({url})", flush=True)


def _freshness_once(home: Path, config: Path, dagster_pg_url: str) -> list[str]:
    """One tick of the freshness sensor against the stack's instance, recorded as the daemon does."""
    from rag_pipeline.defs.alerts import source_freshness
    from rag_pipeline.defs.resources import IndexDatabase, PipelineSettings

    os.environ["DAGSTER_PG_URL"] = dagster_pg_url
    cursor = json.dumps({"stale": [], "first_seen": {SOURCE: (datetime.now(UTC) - timedelta(days=8)).isoformat()}})
    database_resource = IndexDatabase(settings=PipelineSettings(config_path=str(config)))
    with dg.DagsterInstance.from_config(str(home)) as instance, \
            dg.build_sensor_context(instance=instance, cursor=cursor, resources={"database": database_resource}) as context:
        result = source_freshness(context)
        for event in result.asset_events:
            instance.report_runless_asset_event(event)
    return [e.metadata["reason"].value for e in result.asset_events]


def main() -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="screenshots-ops-"))
    root.chmod(0o755)
    docs = root / "docs"
    shutil.copytree(ROOT / "demo" / "docs", docs)
    server = database.embedded_url(root / "pgdata")
    index_url = server  # the scratch server's own database holds the index
    try:
        with webhook_receiver() as (hook, received):
            config = root / "rag_pipeline.yaml"
            config.write_text(
                f"database_url: '{index_url}'\nstate_dir: {root / 'state'}\n"
                f"sources:\n  - {{name: {SOURCE}, path: {docs}, schedule: '0 2 * * *'}}\n"
                f"alerts: {{webhook: '{hook}', freshness_grace_minutes: 60}}\n")
            dagster_pg_url = database.dagster_url(index_url)
            (root / "home" / ".nux").mkdir(parents=True)  # the UI's first-visit dialog: already seen
            (root / "home" / ".nux" / "nux.yaml").write_text("seen: 1\n")
            with dagster_stack(root / "home", config, dagster_pg_url) as stack:
                base = f"http://127.0.0.1:{stack.port}"
                (docs / "hr" / "_access.yaml").write_text("groups: not-a-list\n")  # the plan fails on it
                run_id = stack.launch(f"sync_{SOURCE}")
                print(f"run {run_id}: {stack.wait_finished(run_id)['status']}", flush=True)
                stack.wait("the failure alert at the webhook receiver", lambda: received, timeout=300)
                print("alert received:", json.dumps(received[0]["body"])[:400], flush=True)
                print("freshness:", _freshness_once(stack.home, config, dagster_pg_url), flush=True)
                browser = _browser(root / "profile")
                try:
                    _shoot(browser, f"{base}/assets/source/{SOURCE}", "ops-source.png")
                    _shoot(browser, f"{base}/assets/source/{SOURCE}?view=checks", "ops-freshness.png")
                    _shoot(browser, f"{base}/runs/{run_id}", "ops-alert-run.png")
                finally:
                    browser.quit()
    finally:
        database.stop_server(root / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
