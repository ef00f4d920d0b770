"""The blob store in a bucket (`blob_store: s3://bucket/prefix`), against a real S3 API (moto
server on loopback): content-addressed like the local folder, verified on read, and every
version's raw bytes readable whichever store holds them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml
from conftest import write_config
from helpers import query, run_cli, sync
from s3_server import Bucket

from rag_pipeline.blobs import BlobReadError, BlobStore, ChainedBlobs, open_blob_store
from rag_pipeline.blobs.s3 import S3BlobStore
from rag_pipeline.common.s3 import make_client
from rag_pipeline.config import load_config
from rag_pipeline.parsing import parse_document


@pytest.fixture(autouse=True)
def _ephemeral_dagster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def _store(bucket: Bucket, prefix: str = "raw") -> S3BlobStore:
    client, counter = make_client(endpoint_url=bucket.endpoint)
    return S3BlobStore(client, f"s3://{bucket.name}/{prefix}", counter)


def test_blobs_are_content_addressed_under_the_prefix_and_written_once(bucket: Bucket) -> None:
    store = _store(bucket)
    data = b"raw bytes \x00\xff of a version"
    sha = store.put(data)
    assert sha == hashlib.sha256(data).hexdigest()
    assert bucket.client.get_object(Bucket=bucket.name, Key=f"raw/{sha[:2]}/{sha}")["Body"].read() == data
    assert store.put(data) == sha  # idempotent
    keys = [o["Key"] for o in bucket.client.list_objects_v2(Bucket=bucket.name)["Contents"]]
    assert keys == [f"raw/{sha[:2]}/{sha}"]
    assert store.get(sha) == data
    assert store.put(b"") == hashlib.sha256(b"").hexdigest() and store.get(hashlib.sha256(b"").hexdigest()) == b""


def test_a_blob_changed_in_the_bucket_is_refused_as_corrupt(bucket: Bucket) -> None:
    store = _store(bucket)
    sha = store.put(b"the original")
    bucket.put(f"raw/{sha[:2]}/{sha}", b"tampered")
    with pytest.raises(BlobReadError, match="corrupt"):
        store.get(sha)


def test_a_missing_blob_is_file_not_found_and_a_bad_name_is_refused(bucket: Bucket) -> None:
    store = _store(bucket)
    with pytest.raises(FileNotFoundError):
        store.get("0" * 64)
    with pytest.raises(ValueError, match="not a SHA-256"):
        store.get("../../etc/passwd")


def test_reads_fall_back_to_the_local_folder_after_switching_to_a_bucket(tmp_path: Path, bucket: Bucket) -> None:
    local = BlobStore(tmp_path / "blobs")
    old = local.put(b"written before the switch")
    chained = ChainedBlobs(_store(bucket), [local])
    assert chained.get(old) == b"written before the switch"
    new = chained.put(b"written after")
    assert not (tmp_path / "blobs" / new[:2] / new).exists()  # writes go to the bucket only
    assert chained.get(new) == b"written after"
    with pytest.raises(FileNotFoundError):
        chained.get("1" * 64)


def test_a_deleted_blob_is_gone_from_every_store_of_the_chain(tmp_path: Path, bucket: Bucket) -> None:
    """What a refused file holding a private key gets (sync/parse.py); deleting twice is fine."""
    local = BlobStore(tmp_path / "blobs")
    data = b"bytes that must not be kept"
    sha = local.put(data)
    chained = ChainedBlobs(_store(bucket), [local])
    assert chained.put(data) == sha
    chained.delete(sha)
    chained.delete(sha)
    with pytest.raises(FileNotFoundError):
        chained.get(sha)
    assert not (tmp_path / "blobs" / sha[:2] / sha).exists()
    assert "Contents" not in bucket.client.list_objects_v2(Bucket=bucket.name)


def test_unreachable_blob_bucket_is_an_os_error_the_run_reports(aws_env) -> None:
    client, counter = make_client(endpoint_url="http://127.0.0.1:9", max_attempts=1)
    store = S3BlobStore(client, "s3://nowhere/raw", counter)
    with pytest.raises(BlobReadError, match="cannot"):
        store.put(b"x")


def test_sync_with_a_bucket_blob_store_keeps_every_versions_bytes_there_for_history_and_reparse(
    capsys, tmp_path: Path, db_url: str, demo_copy: Path, bucket: Bucket
) -> None:
    path = write_config(tmp_path, db_url, docs=demo_copy)
    assert sync(capsys, path)[0] == 0  # first with the default: the local folder
    raw = yaml.safe_load(path.read_text())
    raw["blob_store"] = {"url": f"s3://{bucket.name}/blobs", "endpoint_url": bucket.endpoint}
    path.write_text(yaml.safe_dump(raw))
    (demo_copy / "it" / "security-handbook.md").write_text("# Security\n\nBadges are renewed every March.\n")
    code, out = sync(capsys, path)
    assert code == 0 and out["counts"]["plan"]["changed"] == 1, out
    rows = query(db_url, "SELECT v.version_no, v.blob_sha256, v.checksum FROM document_versions v"
                         " JOIN documents d ON d.id = v.document_id WHERE d.uri = 'it/security-handbook.md'"
                         " ORDER BY v.version_no")
    (_, old, _), (_, new, checksum) = rows
    assert checksum == "sha256:" + new
    in_bucket = {o["Key"] for o in bucket.client.list_objects_v2(Bucket=bucket.name)["Contents"]}
    assert in_bucket == {f"blobs/{new[:2]}/{new}"}  # only the new version's bytes went to the bucket
    config = load_config(path)
    assert not (config.blob_dir / new[:2] / new).exists()
    code, history = run_cli(capsys, "history", "it/security-handbook.md", "--config", str(path))
    assert code == 0 and [v["version_no"] for v in history["versions"]] == [1, 2]
    blobs = open_blob_store(config.blob_store, config.blob_dir)
    for sha, words in ((old, "Security"), (new, "Badges are renewed")):  # re-parse either version
        parsed = parse_document(blobs.get(sha), "security-handbook.md")
        assert any(words in e.text for e in parsed.elements)
