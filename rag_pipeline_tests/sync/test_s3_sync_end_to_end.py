"""S3 sources end to end through the real CLI: a real S3 API (moto server on loopback), real
PostgreSQL + pgvector, the real model and the real Dagster job. Each test names the behaviour
users rely on; the folder source's guarantees hold for buckets too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import DEMO_DIR
from helpers import query, search, sync, versions
from s3_server import Bucket, FaultProxy, MotoServer, new_bucket

DOCS = {
    "fleet.md": "# Fleet\n\nCompany vans are refuelled at the depot in Bremen every Friday.\n",
    "canteen.md": "# Canteen\n\nThe canteen serves lunch from noon to two in the afternoon.\n",
    "parking.md": "# Parking\n\nVisitors park in the north lot beside the loading bay.\n",
    "hr/payroll.md": "# Payroll\n\nSalaries are paid on the last working day of each month.\n",
}


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def write_s3_config(root: Path, db_url: str, bucket: Bucket, *, endpoint: str | None = None,
                    source: dict[str, Any] | None = None, extra_sources: list[dict[str, Any]] | None = None,
                    **top: Any) -> Path:
    """A config with one s3 source named 'bucket' over `docs/` of the bucket (and more sources)."""
    s3 = {"name": "bucket", "kind": "s3", "bucket": bucket.name, "prefix": "docs/",
          "endpoint_url": endpoint or bucket.endpoint, "region": "us-east-1", "max_attempts": 2, **(source or {})}
    config = {"database_url": db_url, "state_dir": str(root / "state"),
              "sources": [s3, *(extra_sources or [])], **top}
    path = root / "rag_pipeline.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def upload_docs(bucket: Bucket, groups: str = "all-staff") -> None:
    for rel, text in DOCS.items():
        bucket.put("docs/" + rel, text, tags={"rag-groups": "hr" if rel.startswith("hr/") else groups})


def live_count(db_url: str, source: str = "bucket") -> int:
    return query(db_url, "SELECT count(*) FROM document_versions v JOIN documents d ON d.id = v.document_id"
                         " WHERE d.source = %s AND v.status = 'live'", source)[0][0]


@pytest.fixture
def synced(capsys, tmp_path: Path, db_url: str, bucket: Bucket) -> Path:
    upload_docs(bucket)
    config = write_s3_config(tmp_path, db_url, bucket)
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "published", out
    return config


def test_s3_and_folder_sources_sync_together_and_search_filters_by_object_groups(
    capsys, tmp_path: Path, db_url: str, bucket: Bucket, demo_copy: Path
) -> None:
    upload_docs(bucket)
    folder = {"name": "larkspur", "kind": "filesystem", "path": str(demo_copy)}
    config = write_s3_config(tmp_path, db_url, bucket, extra_sources=[folder],
                             evaluation={"eval_set": str(DEMO_DIR / "eval.yaml"), "k": 5})
    code, out = sync(capsys, config)
    assert code == 0, out
    assert out["counts"]["plan"]["new"] == 4 + 7
    assert live_count(db_url, "bucket") == 4 and live_count(db_url, "larkspur") == 7
    hits = search(capsys, config, "Where are company vans refuelled?", "all-staff", "-k", "1")
    assert hits[0]["uri"].endswith("fleet.md") and "Bremen" in hits[0]["text"]
    payroll = "When are salaries paid?"
    assert all(not h["uri"].endswith("hr/payroll.md") for h in search(capsys, config, payroll, "all-staff", "-k", "20"))
    assert search(capsys, config, payroll, "hr", "-k", "1")[0]["uri"].endswith("hr/payroll.md")
    assert search(capsys, config, payroll, "nobody-group") == []


def test_unchanged_bucket_syncs_to_nothing_without_downloading(
    capsys, tmp_path: Path, db_url: str, bucket: Bucket, fault_proxy: FaultProxy
) -> None:
    upload_docs(bucket)
    config = write_s3_config(tmp_path, db_url, bucket, endpoint=fault_proxy.endpoint)
    assert sync(capsys, config)[0] == 0
    fault_proxy.requests.clear()
    code, out = sync(capsys, config)
    assert code == 0 and out["status"] == "nothing_to_do"
    assert out["counts"]["plan"]["unchanged"] == 4
    downloads = [p for m, p in fault_proxy.requests if m == "GET" and "list-type" not in p and "tagging" not in p]
    assert downloads == []


def test_tag_only_revocation_makes_an_access_only_version_without_reparsing(
    capsys, synced: Path, db_url: str, bucket: Bucket
) -> None:
    bucket.set_tags("docs/fleet.md", {"rag-groups": "logistics"})  # all-staff revoked; ETag unchanged
    code, out = sync(capsys, synced)
    assert code == 0, out
    assert out["counts"]["plan"]["acl_changed"] == 1 and out["counts"]["plan"]["unchanged"] == 3
    assert out["counts"]["staged"] == {"acl_versions": 1}  # nothing parsed, chunked or embedded
    assert not out["counts"].get("parse", {}).get("parsed")
    assert [(v[0], v[2], v[3]) for v in versions(db_url, "fleet.md")] == [
        (1, "superseded", ["all-staff"]), (2, "live", ["logistics"])]
    question = "Where are company vans refuelled?"
    assert all(not h["uri"].endswith("fleet.md") for h in search(capsys, synced, question, "all-staff", "-k", "10"))
    assert search(capsys, synced, question, "logistics", "-k", "1")[0]["uri"].endswith("fleet.md")


def test_changed_object_is_a_new_version_and_identical_reupload_under_a_new_etag_is_not_reparsed(
    capsys, synced: Path, db_url: str, bucket: Bucket
) -> None:
    before = bucket.etag("docs/canteen.md")
    # the same bytes as a multipart upload: a different ETag ('<md5 of part md5s>-1'), same content
    upload = bucket.client.create_multipart_upload(Bucket=bucket.name, Key="docs/canteen.md",
                                                   Tagging="rag-groups=all-staff")
    part = bucket.client.upload_part(Bucket=bucket.name, Key="docs/canteen.md", UploadId=upload["UploadId"],
                                     PartNumber=1, Body=DOCS["canteen.md"].encode())
    bucket.client.complete_multipart_upload(
        Bucket=bucket.name, Key="docs/canteen.md", UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]})
    after = bucket.etag("docs/canteen.md")
    assert after != before and after.endswith("-1")
    bucket.put("docs/parking.md", "# Parking\n\nVisitors now park in the south lot.\n", tags={"rag-groups": "all-staff"})
    code, out = sync(capsys, synced)
    assert code == 0, out
    assert out["counts"]["plan"]["changed"] == 1 and out["counts"]["plan"]["unchanged"] == 3
    assert [v[0] for v in versions(db_url, "canteen.md")] == [1]
    assert [(v[0], v[2]) for v in versions(db_url, "parking.md")] == [(1, "superseded"), (2, "live")]
    assert "south lot" in search(capsys, synced, "Where do visitors park?", "all-staff", "-k", "1")[0]["text"]
    # the new ETag's content was learned once: the next run downloads nothing and changes nothing
    code, out = sync(capsys, synced)
    assert out["status"] == "nothing_to_do" and out["counts"]["plan"]["unchanged"] == 4


def test_failed_listing_server_stopped_mid_run_tombstones_nothing(capsys, tmp_path: Path, db_url: str, aws_env) -> None:
    server = MotoServer()
    try:
        bucket = new_bucket(server.endpoint)
        upload_docs(bucket)
        config = write_s3_config(tmp_path, db_url, bucket)
        assert sync(capsys, config)[0] == 0
        server.stop()
        code, out = sync(capsys, config)
        assert code == 1
        assert "listing s3://" in out["error"] and "nothing is tombstoned" in out["error"]
        assert live_count(db_url) == 4
        assert query(db_url, "SELECT count(*) FROM document_versions WHERE kind = 'tombstone'")[0][0] == 0
    finally:
        server.stop()


def test_throttled_listing_is_retried_and_the_retries_are_in_the_runs_report(
    capsys, tmp_path: Path, db_url: str, bucket: Bucket, fault_proxy: FaultProxy
) -> None:
    upload_docs(bucket)
    fault_proxy.throttle_listings(1)
    config = write_s3_config(tmp_path, db_url, bucket, endpoint=fault_proxy.endpoint)
    code, out = sync(capsys, config)
    assert code == 0, out
    assert out["counts"]["plan"]["s3_retries"] == 1 and out["counts"]["plan"]["s3_calls"] >= 6
    assert live_count(db_url) == 4


def test_mass_delete_from_the_bucket_stops_and_needs_an_explicit_flag(capsys, synced: Path, db_url: str, bucket: Bucket) -> None:
    for rel in ("fleet.md", "canteen.md", "hr/payroll.md"):
        bucket.delete("docs/" + rel)
    code, out = sync(capsys, synced)
    assert code == 1 and "--allow-mass-tombstone" in out["error"]
    assert live_count(db_url) == 4
    code, out = sync(capsys, synced, "--allow-mass-tombstone")
    assert code == 0 and out["counts"]["published"]["tombstoned"] == 3
    assert live_count(db_url) == 1


def test_object_deleted_between_listing_and_download_is_quarantined_then_gone_next_run(
    capsys, tmp_path: Path, db_url: str, bucket: Bucket, fault_proxy: FaultProxy
) -> None:
    upload_docs(bucket)
    config = write_s3_config(tmp_path, db_url, bucket, endpoint=fault_proxy.endpoint)
    assert sync(capsys, config)[0] == 0
    bucket.put("docs/fleet.md", "# Fleet\n\nVans are now refuelled in Hamburg.\n", tags={"rag-groups": "all-staff"})

    def delete_before_download(method: str, path: str) -> None:
        if method == "GET" and path.split("?")[0].endswith("/docs/fleet.md") and "tagging" not in path:
            bucket.delete("docs/fleet.md")  # on the real server, after the listing saw it
        return None

    fault_proxy.fault = delete_before_download
    code, out = sync(capsys, config)
    assert code == 0, out
    (entry,) = out["quarantined"]
    assert entry["uri"] == "fleet.md" and entry["stage"] == "read"
    assert "deleted after it was listed" in entry["error"]
    assert [(v[0], v[2]) for v in versions(db_url, "fleet.md")] == [(1, "live")]  # not tombstoned yet
    fault_proxy.fault = lambda method, path: None
    code, out = sync(capsys, config)
    assert code == 0 and out["counts"]["plan"]["gone"] == 1
    assert [(v[0], v[1], v[2]) for v in versions(db_url, "fleet.md")] == [
        (1, "content", "superseded"), (2, "tombstone", "tombstoned")]


def test_object_recreated_after_its_tombstone_is_a_new_version_of_the_same_document(
    capsys, synced: Path, db_url: str, bucket: Bucket
) -> None:
    bucket.delete("docs/parking.md")
    assert sync(capsys, synced)[0] == 0
    bucket.put("docs/parking.md", DOCS["parking.md"], tags={"rag-groups": "all-staff"})  # same bytes, same ETag
    code, out = sync(capsys, synced)
    assert code == 0 and out["counts"]["plan"]["new"] == 1, out
    rows = query(db_url, "SELECT d.id, v.version_no, v.kind, v.status, v.valid_to IS NULL FROM document_versions v"
                         " JOIN documents d ON d.id = v.document_id WHERE d.uri = 'parking.md' ORDER BY v.version_no")
    assert len({r[0] for r in rows}) == 1  # one document throughout
    assert [r[1:] for r in rows] == [(1, "content", "superseded", False), (2, "tombstone", "tombstoned", False),
                                     (3, "content", "live", True)]


def test_object_over_the_size_limit_is_quarantined_unread_and_its_live_version_stays(
    capsys, synced: Path, tmp_path: Path, db_url: str, bucket: Bucket
) -> None:
    bucket.put("docs/canteen.md", "# Canteen\n\n" + "Lunch is served at noon. " * 100, tags={"rag-groups": "all-staff"})
    bucket.put("docs/huge.md", "# Huge\n\n" + "word " * 1000, tags={"rag-groups": "all-staff"})
    limited = write_s3_config(tmp_path, db_url, bucket, limits={"max_bytes": 1000})
    code, out = sync(capsys, limited)
    assert code == 0, out
    errors = {q["uri"]: (q["stage"], q["error"]) for q in out["quarantined"]}
    assert set(errors) == {"canteen.md", "huge.md"}
    assert all(stage == "list" and "over the limits.max_bytes limit" in e for stage, e in errors.values())
    assert [(v[0], v[2]) for v in versions(db_url, "canteen.md")] == [(1, "live")]  # not tombstoned
    assert versions(db_url, "huge.md") == []


def test_hostile_object_names_and_empty_objects_through_the_whole_pipeline(
    capsys, tmp_path: Path, db_url: str, bucket: Bucket
) -> None:
    names = {
        "spaces and 'quotes' \"double\".md": "The spaces document mentions the blue heron.",
        "hr/../escape.md": "The dot-dot document mentions the green lantern.",
        "Ünïcødé/文件.md": "The unicode document mentions the silver kettle.",
        "ctl\tchars\r.md": "The control document mentions the copper bell.",
        "l/" + "n" * 996 + ".md": "The long name document mentions the amber lamp.",
    }
    for rel, text in names.items():
        bucket.put("docs/" + rel, f"# Title\n\n{text}\n", tags={"rag-groups": "all-staff"})
    bucket.put("docs/empty.md", b"", tags={"rag-groups": "all-staff"})
    bucket.put("docs//leading-slash.md", "# X\n\nThe leading slash document.\n", tags={"rag-groups": "all-staff"})
    config = write_s3_config(tmp_path, db_url, bucket, max_failed_share=0.9)
    code, out = sync(capsys, config)
    assert code == 0, out
    quarantined = {q["uri"]: q for q in out["quarantined"]}
    assert set(quarantined) == {"empty.md", "/leading-slash.md"}
    assert "empty" in quarantined["empty.md"]["error"]
    assert "path segment" in quarantined["/leading-slash.md"]["error"]
    assert live_count(db_url) == len(names)
    for rel, text in names.items():
        word = text.split("mentions the ")[1].rstrip(".")
        hit = search(capsys, config, f"Which document mentions the {word}?", "all-staff", "-k", "1")[0]
        assert hit["uri"].endswith(rel), (rel, hit["uri"])
        assert [(v[0], v[2]) for v in versions(db_url, rel)] == [(1, "live")]
