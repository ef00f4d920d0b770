"""Stored bytes heal (issue 22, item 6): a blob missing, truncated, corrupted or replaced in its
store is rewritten from the source's bytes the next time those bytes are stored, never trusted
by its name alone; in a local folder and in a bucket (moto's server mode)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from s3_server import Bucket

from rag_pipeline.blobs import BlobReadError, BlobStore
from rag_pipeline.blobs.s3 import S3BlobStore
from rag_pipeline.common.s3 import make_client

DATA = b"# Canteen\n\nThe canteen serves lentil soup on Thursdays.\n"
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "emptied", "other file's bytes", "missing"])
def test_a_damaged_local_blob_is_rewritten_by_the_next_put_of_its_bytes(tmp_path: Path, damage: str) -> None:
    store = BlobStore(tmp_path / "blobs")
    assert store.put(DATA) == SHA
    path = tmp_path / "blobs" / SHA[:2] / SHA
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes({"flipped byte": DATA[:5] + b"X" + DATA[6:], "truncated": DATA[:10], "emptied": b"",
                          "other file's bytes": b"x" * len(DATA)}[damage])
    with pytest.raises(OSError):  # BlobReadError or FileNotFoundError: never the wrong bytes
        store.get(SHA)
    assert store.put(DATA) == SHA
    assert path.read_bytes() == DATA and store.get(SHA) == DATA
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]  # an atomic rewrite


def test_an_intact_local_blob_is_not_rewritten(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    store.put(DATA)
    path = tmp_path / "blobs" / SHA[:2] / SHA
    before = path.stat().st_ino
    store.put(DATA)
    assert path.stat().st_ino == before


def _s3_store(bucket: Bucket) -> S3BlobStore:
    client, counter = make_client(endpoint_url=bucket.endpoint)
    return S3BlobStore(client, f"s3://{bucket.name}/raw", counter)


@pytest.mark.parametrize("damage", ["replaced, same length, with a checksum", "replaced, same length, no checksum",
                                    "truncated", "deleted"])
def test_a_damaged_s3_blob_is_rewritten_by_the_next_put_of_its_bytes(bucket: Bucket, damage: str) -> None:
    store = _s3_store(bucket)
    store.put(DATA)
    key = f"raw/{SHA[:2]}/{SHA}"
    other = b"y" * len(DATA)
    if damage == "deleted":
        bucket.delete(key)
    elif damage == "truncated":
        bucket.put(key, DATA[:10])
    elif damage.endswith("with a checksum"):
        bucket.client.put_object(Bucket=bucket.name, Key=key, Body=other, ChecksumAlgorithm="SHA256")
    else:
        bucket.put(key, other)
    with pytest.raises((BlobReadError, FileNotFoundError)):
        store.get(SHA)
    assert store.put(DATA) == SHA
    assert store.get(SHA) == DATA
    assert bucket.client.get_object(Bucket=bucket.name, Key=key)["Body"].read() == DATA
