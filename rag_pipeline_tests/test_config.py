"""Configuration refuses what it does not know and numbers out of range, naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_pipeline.config import ConfigError, load_config
from rag_pipeline.errors import EXIT_USAGE

BASE = "sources:\n  - {name: docs, path: ./docs}\n"


def _load(tmp_path: Path, text: str):
    path = tmp_path / "rag_pipeline.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize(("text", "message"), [
    (BASE + "sorces: []\n", "unknown key sorces"),
    (BASE + "embedding: {modle: x}\n", "unknown key embedding.modle"),
    (BASE + "evaluation: {threshold: {ndcg: 1}}\n", "unknown key evaluation.threshold"),
    (BASE + "limits: {max_second: 3}\n", "unknown key limits.max_second"),
    ("sources:\n  - {name: docs, path: ./docs, pth: x}\n", r"unknown key sources\[0\].pth"),
    ("sources:\n  - {name: docs, kind: s3, bucket: b, path: ./docs}\n", r"unknown key sources\[0\].path"),
    (BASE + "max_failed_share: 1.5\n", "max_failed_share must be at most 1"),
    (BASE + "max_failed_share: -0.1\n", "max_failed_share must be at least 0"),
    ("sources:\n  - {name: docs, path: ./docs, max_tombstone_share: 2}\n", "max_tombstone_share must be at most 1"),
    (BASE + "limits: {max_seconds: 0}\n", "limits.max_seconds must be above 0"),
    (BASE + "limits: {max_bytes: -5}\n", "limits.max_bytes must be positive"),
    (BASE + "limits: {ocr: 'yes'}\n", "limits.ocr must be true or false"),
    (BASE + "evaluation: {k: 0}\n", "evaluation.k must be positive"),
    (BASE + "evaluation: {k: ten}\n", "evaluation.k must be a whole number"),
    (BASE + "evaluation: {refusal_score: 3}\n", "evaluation.refusal_score must be at most 1"),
    (BASE + "evaluation: {thresholds: {ndcg: high}}\n", "evaluation.thresholds.ndcg must be a number"),
    (BASE + "batch_size: 2.5\n", "batch_size must be a whole number"),
    (BASE + "shard_size: 0\n", "shard_size must be positive"),
    (BASE + "shard_size: many\n", "shard_size must be a whole number"),
    (BASE + "embedding: {batch_size: true}\n", "embedding.batch_size must be a whole number"),
    (BASE + "embedding: [model]\n", "'embedding' must be a mapping"),
    (BASE + "state_dir: [a, b]\n", "state_dir must be a string"),
    ("sources:\n  - {name: b, kind: s3}\n", "needs a 'bucket'"),
    ("sources:\n  - {name: b, kind: s3, bucket: 's3://x/y'}\n", "a bucket name, no s3://"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, prefix: 3}\n", r"sources\[0\].prefix must be a string"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, default_groups: hr}\n", "default_groups must be a list"),
    ("sources:\n  - {name: f, kind: filesystem, path: ., default_groups: [' ']}\n", "default_groups must be a list"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, object_acl: [tags]}\n", "object_acl must be a list of"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, retry_mode: forever}\n", "retry_mode must be one of"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, max_attempts: 0}\n", "max_attempts must be positive"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, concurrent_requests: 0}\n", r"concurrent_requests must be a whole number from 1 to 128"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, concurrent_requests: 100000}\n", "from 1 to 128, got 100000"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, concurrent_requests: 8.5}\n", "concurrent_requests must be a whole number"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, concurrent_requests: true}\n", "concurrent_requests must be a whole number"),
    ("sources:\n  - {name: d, path: ./docs, concurrent_requests: 4}\n", r"unknown key sources\[0\].concurrent_requests"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, endpoint: http://h}\n", r"unknown key sources\[0\].endpoint"),
    (BASE + "source_wait_seconds: -1\n", "source_wait_seconds must be at least 0"),
    (BASE + "source_wait_seconds: 100000\n", "source_wait_seconds must be at most 86400"),
    (BASE + "source_wait_seconds: forever\n", "source_wait_seconds must be a number"),
    (BASE + "parse_workers: 0\n", "parse_workers must be a whole number from 1 to 64"),
    (BASE + "parse_workers: 1000000000\n", "parse_workers must be a whole number from 1 to 64"),
    (BASE + "parse_workers: 2.5\n", "parse_workers must be a whole number from 1 to 64"),
    (BASE + "parse_workers: true\n", "parse_workers must be a whole number from 1 to 64"),
    (BASE + "parse_workers: all\n", "parse_workers must be 'auto' or a whole number from 1 to 64, got 'all'"),
    (BASE + "parse_workers: [2]\n", "parse_workers must be a whole number from 1 to 64"),
    (BASE + "blob_store: /var/blobs\n", "blob_store: '/var/blobs' is not an s3:// URL"),
    (BASE + "blob_store: 's3:///prefix'\n", "names no bucket"),
    (BASE + "blob_store: {url: 's3://b/p', endpoint: x}\n", "unknown key blob_store.endpoint"),
    (BASE + "blob_store: [s3://b]\n", "blob_store must be"),
])
def test_bad_configuration_is_refused_with_the_key_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        _load(tmp_path, text)
    assert str(tmp_path / "rag_pipeline.yaml") in str(caught.value)
    assert caught.value.exit_code == EXIT_USAGE


def test_a_valid_configuration_keeps_its_meaning(tmp_path: Path) -> None:
    config = _load(tmp_path, BASE + "max_failed_share: 0\nlimits: {max_seconds: 4, ocr: false}\nevaluation: {k: 3, refusal_score: 0.2}\n")
    assert config.max_failed_share == 0.0
    assert config.limits.max_seconds == 4.0 and config.limits.ocr is False
    assert config.evaluation.k == 3 and config.evaluation.refusal_score == 0.2
    assert config.source_wait_seconds == 3600  # a sync waits up to an hour for a busy source
    assert _load(tmp_path, BASE + "source_wait_seconds: 0\n").source_wait_seconds == 0  # 0: fail at once
    assert config.parse_workers is None  # auto: sized to the machine that runs the parse step
    assert _load(tmp_path, BASE + "parse_workers: auto\n").parse_workers is None
    assert _load(tmp_path, BASE + "parse_workers: 3\n").parse_workers == 3
    assert config.sources[0].path == (tmp_path / "docs").resolve()


@pytest.mark.parametrize("text", [
    "sources:\n  - {name: b, kind: s3, bucket: x, aws_secret_access_key: abc}\n",
    "sources:\n  - {name: b, kind: s3, bucket: x, AWS_ACCESS_KEY_ID: AKIA}\n",
    "sources:\n  - {name: b, kind: s3, bucket: x, credentials: {secret_key: abc}}\n",
    BASE + "blob_store: {url: 's3://b/p', aws_session_token: t}\n",
    BASE + "aws_access_key_id: AKIA\n",
])
def test_credentials_in_the_config_file_are_refused_pointing_at_the_credential_chain(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="credentials are never read from the config file") as caught:
        _load(tmp_path, text)
    assert "AWS_PROFILE" in str(caught.value) and "abc" not in str(caught.value)


def test_s3_source_and_blob_store_keep_their_meaning(tmp_path: Path) -> None:
    config = _load(tmp_path, BASE + (
        "  - {name: contracts, kind: s3, bucket: acme-docs, prefix: contracts/, endpoint_url: 'http://127.0.0.1:9000',"
        " region: eu-west-1, default_groups: [legal, ' legal '], object_acl: [tag], max_attempts: 8, retry_mode: adaptive,"
        " concurrent_requests: 64}\n"
        "blob_store: {url: 's3://acme-blobs/raw', endpoint_url: 'http://127.0.0.1:9000'}\n"))
    s3 = config.source("contracts")
    assert (s3.bucket, s3.prefix, s3.endpoint_url, s3.region) == ("acme-docs", "contracts/", "http://127.0.0.1:9000", "eu-west-1")
    assert s3.default_groups == ("legal",) and s3.object_acl == ("tag",)
    assert (s3.max_attempts, s3.retry_mode, s3.concurrent_requests) == (8, "adaptive", 64)
    assert config.blob_store is not None and config.blob_store.url == "s3://acme-blobs/raw"
    plain = _load(tmp_path, BASE + "  - {name: c, kind: s3, bucket: b}\nblob_store: s3://b/blobs\n")
    assert plain.source("c").object_acl == ("tag", "metadata") and plain.source("c").max_attempts == 5
    assert plain.source("c").concurrent_requests == 16
    assert plain.blob_store is not None and plain.blob_store.endpoint_url is None
    assert _load(tmp_path, BASE).blob_store is None  # the local folder stays the default


def test_hostile_and_huge_configuration_files_are_refused_cleanly(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        _load(tmp_path, "sources: [\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        _load(tmp_path, "- a\n- b\n")
    huge = BASE + "".join(f"key{i}: {i}\n" for i in range(50_000))
    with pytest.raises(ConfigError, match="unknown key key0"):
        _load(tmp_path, huge)
    (tmp_path / "rag_pipeline.yaml").write_bytes(b"sources: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(tmp_path / "rag_pipeline.yaml")


def test_the_corpus_eval_config_reads_the_shared_corpus_in_place_for_all_staff() -> None:
    root = Path(__file__).resolve().parent.parent
    config = load_config(root / "evalsets" / "corpus" / "rag_pipeline.yaml")
    (source,) = config.sources
    assert source.kind == "filesystem" and source.default_groups == ("all-staff",)
    assert source.path == (root.parent / "shared" / "corpus" / "docs").resolve()
    assert config.evaluation.eval_set == root / "evalsets" / "corpus" / "eval.yaml"
