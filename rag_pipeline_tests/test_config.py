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
    (BASE + "embedding: {multilingual: 'off'}\n", "embedding.multilingual must be true or false"),
    (BASE + "embedding: {multilingual: 1}\n", "embedding.multilingual must be true or false"),
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


BIG = "x" * 10_000_000  # 10 MB


@pytest.mark.parametrize(("text", "message"), [
    # strictness: a bool is not a number, "5" and 2.5 are not whole numbers, NaN and infinity are not numbers
    (BASE + "batch_size: true\n", "batch_size must be a whole number, got True"),
    (BASE + "limits: {max_pages: false}\n", "limits.max_pages must be a whole number, got False"),
    (BASE + "limits: {max_pages: '5'}\n", "limits.max_pages must be a whole number, got '5'"),
    (BASE + "evaluation: {k: 2.5}\n", "evaluation.k must be a whole number, got 2.5"),
    ("sources:\n  - {name: b, kind: s3, bucket: x, max_attempts: true}\n", r"sources\[0\].max_attempts must be a whole"),
    (BASE + "max_failed_share: .nan\n", "max_failed_share must be a number, got nan"),
    (BASE + "max_failed_share: true\n", "max_failed_share must be a number, got True"),
    (BASE + "limits: {max_seconds: .inf}\n", "limits.max_seconds must be a number, got inf"),
    (BASE + "source_wait_seconds: -.inf\n", "source_wait_seconds must be a number, got -inf"),
    (BASE + "evaluation: {thresholds: {ndcg: .nan}}\n", "evaluation.thresholds.ndcg must be a number, got nan"),
    (BASE + "evaluation: {thresholds: {ndcg: -0.5}}\n", "evaluation.thresholds.ndcg must be at least 0, got -0.5"),
    (BASE + "evaluation: {refusal_score: '0.3'}\n", "evaluation.refusal_score must be a number, got '0.3'"),
    (BASE + "embedding: {model: 7}\n", "embedding.model must be a string, got 7"),
    (BASE + "embedding: {backend: ONNX}\n", "embedding.backend must be one of 'auto', .*'torch-bf16'.*, got 'ONNX'"),
    (BASE + "evaluation: {eval_set: [a]}\n", "evaluation.eval_set must be a string, got"),
    ("sources:\n  - {name: d, path: ./docs, deny: ['*.tmp', 3]}\n", r"sources\[0\].deny must be a list of glob patterns, got 3"),
    ("sources:\n  - {name: d, kind: ftp, path: ./docs}\n", r"sources\[0\].kind must be one of 'filesystem' or 's3', got 'ftp'"),
    ("sources:\n  - {name: 'a b', path: ./docs}\n", r"sources\[0\].name must be .*letters, digits, '-' and '_', got 'a b'"),
    ("sources:\n  - {path: ./docs}\n", r"sources\[0\] needs a 'name'"),
    ("sources:\n  - {name: d}\n", r"sources\[0\] needs a 'path'"),
    ("sources:\n  - {name: d, path: ''}\n", r"sources\[0\].path must be a non-empty string"),
    ("sources:\n  - {name: d, path: a}\n  - {name: d, path: b}\n", r"sources must have unique names, got \['d', 'd'\]"),
    ("sources:\n  - docs\n", r"'sources\[0\]' must be a mapping of keys, got 'docs'"),
    ("sources: docs\n", "sources must be a list, got 'docs'"),
    # unknown keys nested anywhere name their full path and the keys known there
    ("sources:\n  - {name: b, kind: s3, bucket: x, path: p, pth: q}\n",
     r"unknown key sources\[0\].path, sources\[0\].pth; known here: name, kind, bucket, prefix"),
    ("sources:\n  - {name: a, path: a}\n  - {name: b, path: b, tags: {x: 1}}\n",
     r"unknown key sources\[1\].tags; known here: name, kind, path, deny"),
    (BASE + "blob_store: {url: 's3://b/p', options: {retries: 3}}\n", "unknown key blob_store.options; known here: url, "),
    (BASE + "evaluation: {k: 3, extra: {deep: [1, {x: 2}]}}\n", "unknown key evaluation.extra; known here: eval_set, k"),
    (BASE + "limits: {max_pages: 3, nested: {max_pages: 4}}\n", "unknown key limits.nested; known here: max_bytes"),
])
def test_hostile_values_are_refused_naming_the_key_path_the_rule_and_the_value(
        tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        _load(tmp_path, text)
    assert str(caught.value).startswith(f"{tmp_path / 'rag_pipeline.yaml'}: ")


@pytest.mark.parametrize(("text", "key"), [
    (BASE + f"embedding: {{backend: {BIG}}}\n", "embedding.backend must be one of"),
    (f"sources:\n  - {{name: {BIG}, path: ./docs}}\n", r"sources\[0\].name must be up to 100 letters"),
    (BASE + f"blob_store: {BIG}\n", "blob_store: 'xxx"),
    (BASE + f"limits: {{ocr_languages: [{BIG}]}}\n", "limits.ocr_languages must be a string"),
    (f"sources:\n  - {{name: d, path: ./docs, schedule: '{BIG} * * * *'}}\n", r"sources\[0\].schedule"),
    (BASE + "sources_: " + "{a: " * 100 + "1" + "}" * 100 + "\n", "unknown key sources_"),
    (BASE + "embedding: {model: " + "[" * 100 + "]" * 100 + "}\n", "embedding.model must be a string, got"),
    (BASE + "evaluation: {thresholds: {ndcg: " + "{a: " * 100 + "1" + "}" * 100 + "}}\n",
     "evaluation.thresholds.ndcg must be a number, got"),
    (BASE + "embedding: {model: " + "[" * 5000 + "]" * 5000 + "}\n", "not valid YAML"),
    (BASE + "batch_size: " + "9" * 5000 + "\n", "not valid YAML"),
    (BASE + "".join(f"{BIG[:100]}{i}: {i}\n" for i in range(50)), r"unknown key 'x+\.\.\.x+0', .* and 40 more; known here"),
])
def test_huge_and_deeply_nested_values_give_a_short_message_naming_the_key(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key) as caught:
        _load(tmp_path, text)
    assert len(str(caught.value)) < 2000


def test_configuration_objects_are_frozen_and_survive_pickling_and_copies(tmp_path: Path) -> None:
    import pickle

    from pydantic import ValidationError

    config = _load(tmp_path, BASE + "  - {name: c, kind: s3, bucket: b, default_groups: [' hr', legal, hr]}\n"
                   "limits: {max_seconds: 4}\nparse_workers: 2\n")
    again = pickle.loads(pickle.dumps(config))
    assert again == config and again.path == config.path and again.root == config.root == tmp_path.resolve()
    assert again.source("c").default_groups == ("hr", "legal")
    auto = config.model_copy(update={"parse_workers": None})  # how a bench run overrides one setting
    assert auto.parse_workers is None and auto.path == config.path and config.parse_workers == 2
    with pytest.raises(ValidationError):
        config.limits.max_seconds = 1.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        config.sources[0].name = "other"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(config.limits)) == config.limits and hash(config.sources[0])


def test_the_limits_feed_the_parse_key_exactly_as_the_dataclass_did(tmp_path: Path) -> None:
    """A changed parse key re-parses every file once: the settings string must not drift."""
    import json

    limits = _load(tmp_path, BASE + "limits: {max_seconds: 4, max_compression_ratio: 10, ocr: false}\n").limits
    assert json.dumps(limits.model_dump()) == (
        '{"max_bytes": 209715200, "max_pages": 2000, "max_seconds": 4.0, "max_uncompressed_bytes": 524288000, '
        '"max_compression_ratio": 10.0, "ocr": false, "ocr_languages": "eng+deu+fra"}')


def test_null_sections_and_lists_take_their_defaults(tmp_path: Path) -> None:
    config = _load(tmp_path, "sources:\n  - {name: d, path: ./docs, deny: , default_groups: }\n"
                   "embedding:\nevaluation:\nlimits:\nstate_dir:\nparse_workers: auto\n")
    assert config.sources[0].deny == () and config.sources[0].default_groups == ()
    assert config.embedding.backend == "auto" and config.evaluation.k == 10 and config.limits.max_pages == 2000
    assert config.state_dir == (tmp_path / ".rag_pipeline").resolve() and config.parse_workers is None
    assert config.evaluation.thresholds["ndcg"] == 0.5
    tuned = _load(tmp_path, BASE + "evaluation: {thresholds: {ndcg: 0.7}}\n").evaluation.thresholds
    assert tuned["ndcg"] == 0.7 and tuned["mrr"] == 0.5  # a given threshold replaces only its own default


def test_an_empty_optional_path_means_not_given_as_it_always_has(tmp_path: Path) -> None:
    """Files written for earlier versions keep loading: `state_dir: ''` is the default folder and
    `eval_set: ''` no evaluation set; a source's own path may not be empty."""
    config = _load(tmp_path, "state_dir: ''\nevaluation: {eval_set: ''}\nsources:\n  - {name: a, path: ./docs}\n")
    assert config.state_dir == (tmp_path / ".rag_pipeline").resolve()
    assert config.evaluation.eval_set is None
    with pytest.raises(ConfigError, match=r"sources\[0\]\.path"):
        _load(tmp_path, "sources:\n  - {name: a, path: ''}\n")
