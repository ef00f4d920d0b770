"""S3 source against a real S3 API (moto server on loopback): paginated listing, ETag+size
fingerprints, access groups from the objects themselves, all-or-nothing listings, reads that
never index bytes other than the listed ones, and hostile keys, tags and sizes."""

from __future__ import annotations

import threading

import pytest
from s3_server import Bucket, FaultProxy, MotoServer, new_bucket

from rag_pipeline.common.s3 import make_client
from rag_pipeline.sources.base import ListingError, ObjectReadError, SkippedObject, SourceObject
from rag_pipeline.sources.s3 import S3Source


def _source(b: Bucket, prefix: str = "docs/", endpoint: str | None = None, **kwargs) -> S3Source:
    client, counter = make_client(endpoint_url=endpoint or b.endpoint, max_attempts=kwargs.pop("max_attempts", 3))
    return S3Source("s3docs", client, b.name, prefix, counter=counter, **kwargs)


def _listing(source: S3Source) -> tuple[dict[str, SourceObject], dict[str, SkippedObject]]:
    objects = list(source.list_objects())
    return ({o.uri: o for o in objects if isinstance(o, SourceObject)},
            {o.uri: o for o in objects if isinstance(o, SkippedObject)})


def test_paginated_listing_gives_every_object_with_etag_and_size_fingerprint(bucket: Bucket) -> None:
    for i in range(7):
        bucket.put(f"docs/n{i}.md", f"note {i}")
    bucket.put("docs-old/stale.md", "not under the prefix folder")
    source = _source(bucket, prefix="docs", page_size=2)  # 'docs' means the folder docs/
    listed, skipped = _listing(source)
    assert sorted(listed) == [f"n{i}.md" for i in range(7)] and not skipped
    assert listed["n3.md"].checksum == f"etag:{bucket.etag('docs/n3.md')}:6"
    assert listed["n3.md"].size == 6
    assert source.request_stats["s3_calls"] >= 4  # four pages of two, plus the tag look-ups


def test_object_groups_come_from_tag_then_metadata_then_access_file_then_default(bucket: Bucket) -> None:
    bucket.put("docs/_access.yaml", "files:\n  override.md: [legal]\n")
    bucket.put("docs/tagged.md", "x", tags={"rag-groups": "sales hr", "other": "v"}, metadata={"rag-groups": "ignored"})
    bucket.put("docs/meta.md", "x", metadata={"rag-groups": "finance, audit"})
    bucket.put("docs/override.md", "x")
    bucket.put("docs/plain.md", "x")
    bucket.put("docs/empty-tag.md", "x", tags={"rag-groups": ""})
    listed, _ = _listing(_source(bucket, default_groups=("all-staff",)))
    assert listed["tagged.md"].acl_groups == ("hr", "sales")
    assert listed["meta.md"].acl_groups == ("audit", "finance")
    assert listed["override.md"].acl_groups == ("legal",)
    assert listed["plain.md"].acl_groups == ("all-staff",)  # only the source's default groups
    assert listed["empty-tag.md"].acl_groups == ()  # the object itself says: nobody
    assert "_access.yaml" not in listed  # never indexed


def test_no_tag_metadata_access_file_or_default_means_default_deny(bucket: Bucket) -> None:
    bucket.put("docs/open.md", "x")
    listed, _ = _listing(_source(bucket))
    assert listed["open.md"].acl_groups == ()


def test_access_yaml_objects_work_exactly_as_folder_access_files(bucket: Bucket) -> None:
    bucket.put("docs/_access.yaml", "groups: [all-staff]\n")
    bucket.put("docs/policy.md", "x")
    bucket.put("docs/hr/_access.yaml", "groups: [all-staff]\nfiles:\n  salaries.pdf: [hr]\n")
    bucket.put("docs/hr/salaries.pdf", "x")
    bucket.put("docs/hr/archive/old.md", "x")
    bucket.put("docs/sales/_access.yaml", "groups: [sales, management]\n")
    bucket.put("docs/sales/deals/q1.md", "x")
    bucket.put("docs/Zeta/late.md", "x")  # sorts before '_access.yaml' in the listing
    listed, _ = _listing(_source(bucket, default_groups=("ignored-when-root-sets-groups",)))
    assert listed["policy.md"].acl_groups == ("all-staff",)
    assert listed["hr/salaries.pdf"].acl_groups == ("hr",)
    assert listed["hr/archive/old.md"].acl_groups == ("all-staff",)
    assert listed["sales/deals/q1.md"].acl_groups == ("management", "sales")  # replaced, not merged
    assert listed["Zeta/late.md"].acl_groups == ("all-staff",)


@pytest.mark.parametrize("content, words", [
    ("groups: all-staff\n", "list of group names"),
    ("groups: [ok\n", "not valid YAML"),
    ("grups: [typo]\n", "unknown keys"),
    (b"\xff\xfe not utf-8", "not UTF-8"),
])
def test_broken_access_yaml_object_stops_the_listing_naming_it(bucket: Bucket, content, words: str) -> None:
    bucket.put("docs/team/_access.yaml", content)
    bucket.put("docs/team/a.md", "x")
    with pytest.raises(ListingError, match=words) as caught:
        list(_source(bucket).list_objects())
    assert "team/_access.yaml" in str(caught.value)


def test_object_over_the_size_limit_is_refused_from_the_listing_and_never_downloaded(
    bucket: Bucket, fault_proxy: FaultProxy
) -> None:
    bucket.put("docs/huge.txt", b"x" * 5000)
    bucket.put("docs/small.txt", b"ok")
    source = _source(bucket, endpoint=fault_proxy.endpoint, max_bytes=1000)
    listed, skipped = _listing(source)
    assert "over the limits.max_bytes limit" in skipped["huge.txt"].reason and "huge.txt" not in listed
    assert source.read("small.txt") == b"ok"
    downloads = [p for m, p in fault_proxy.requests if m == "GET" and "huge.txt" in p and "tagging" not in p]
    assert downloads == []


def test_read_refuses_an_object_replaced_or_deleted_since_the_listing(bucket: Bucket) -> None:
    bucket.put("docs/a.md", "first")
    bucket.put("docs/b.md", "second")
    source = _source(bucket)
    _listing(source)
    bucket.put("docs/a.md", "replaced after listing")
    with pytest.raises(ObjectReadError, match="changed after it was listed"):
        source.read("a.md")
    bucket.delete("docs/b.md")
    with pytest.raises(ObjectReadError, match="deleted after it was listed"):
        source.read("b.md")


def test_throttling_is_retried_with_backoff_and_the_retries_are_counted(bucket: Bucket, fault_proxy: FaultProxy) -> None:
    bucket.put("docs/a.md", "x", tags={"rag-groups": "hr"})
    fault_proxy.throttle_listings(2)
    source = _source(bucket, endpoint=fault_proxy.endpoint, max_attempts=4)
    listed, _ = _listing(source)
    assert listed["a.md"].acl_groups == ("hr",)
    assert source.request_stats["s3_retries"] == 2


def test_retries_used_up_make_a_listing_error_that_says_so(bucket: Bucket, fault_proxy: FaultProxy) -> None:
    bucket.put("docs/a.md", "x")
    fault_proxy.fault = lambda method, path: 503 if "list-type" in path else None
    with pytest.raises(ListingError, match=r"failed after 0 objects and 1 retries"):
        list(_source(bucket, endpoint=fault_proxy.endpoint, max_attempts=2).list_objects())


def _hostile_mix(bucket: Bucket) -> None:
    """Objects whose groups come from every place an S3 source reads them, and two it skips."""
    bucket.put("docs/_access.yaml", "groups: [all-staff]\nfiles:\n  f3.md: [legal]\n")
    for i in range(60):
        kind = i % 5
        if kind == 0:
            bucket.put(f"docs/f{i}.md", f"tagged {i}", tags={"rag-groups": f"g{i} shared", "other": "x"})
        elif kind == 1:
            bucket.put(f"docs/f{i}.md", f"meta {i}", metadata={"rag-groups": f"m{i},shared"})
        elif kind == 2:
            bucket.put(f"docs/f{i}.md", f"empty tag {i}", tags={"rag-groups": ""})
        else:
            bucket.put(f"docs/f{i}.md", f"plain {i}")  # from _access.yaml (f3.md from its files: entry)
    bucket.put("docs/big.md", b"x" * 5000)  # over max_bytes: skipped, no look-up
    bucket.put("docs//double.md", "x")  # ambiguous folder: skipped with the reason


def test_parallel_tag_lookups_give_the_same_objects_groups_and_order_as_one_at_a_time(bucket: Bucket) -> None:
    _hostile_mix(bucket)
    one_by_one = _source(bucket, workers=1, max_bytes=1000)
    parallel = _source(bucket, workers=16, max_bytes=1000)
    expected = list(one_by_one.list_objects())
    assert list(parallel.list_objects()) == expected  # same objects, groups, skips, in the same order
    assert parallel.request_stats == one_by_one.request_stats  # same requests: nothing looked up twice
    by_uri = {o.uri: o for o in expected}
    assert by_uri["f0.md"].acl_groups == ("g0", "shared") and by_uri["f1.md"].acl_groups == ("m1", "shared")
    assert by_uri["f2.md"].acl_groups == () and by_uri["f3.md"].acl_groups == ("legal",)
    assert by_uri["f4.md"].acl_groups == ("all-staff",)
    assert isinstance(by_uri["big.md"], SkippedObject) and isinstance(by_uri["/double.md"], SkippedObject)


def test_throttled_tag_lookups_from_many_threads_are_retried_and_every_retry_counted(
    bucket: Bucket, fault_proxy: FaultProxy
) -> None:
    for i in range(40):
        bucket.put(f"docs/n{i:02d}.md", "x", tags={"rag-groups": f"g{i}"})
    throttled = {f"n{i:02d}.md" for i in range(0, 40, 3)}
    seen: set[str] = set()
    lock = threading.Lock()

    def throttle_first_lookup(method: str, path: str) -> int | None:
        """503 SlowDown for the first tag look-up of every third object (S3 throttling per key)."""
        name = path.split("?")[0].rsplit("/", 1)[-1]
        with lock:
            if "tagging" in path and name in throttled and name not in seen:
                seen.add(name)
                return 503
        return None

    fault_proxy.fault = throttle_first_lookup
    source = _source(bucket, endpoint=fault_proxy.endpoint, workers=8, max_attempts=4)
    listed, _ = _listing(source)
    assert {uri: o.acl_groups for uri, o in listed.items()} == {f"n{i:02d}.md": (f"g{i}",) for i in range(40)}
    assert seen == throttled
    assert source.request_stats == {"s3_calls": 1 + 40, "s3_retries": len(throttled)}


def test_a_tag_lookup_that_keeps_failing_stops_the_listing_naming_the_object_and_the_rest_is_cancelled(
    bucket: Bucket, fault_proxy: FaultProxy
) -> None:
    for i in range(200):
        bucket.put(f"docs/n{i:03d}.md", "x", tags={"rag-groups": "hr"})
    fault_proxy.fault = lambda method, path: 503 if "tagging" in path and "n007.md" in path else None
    source = _source(bucket, endpoint=fault_proxy.endpoint, workers=4, max_attempts=2)
    with pytest.raises(ListingError, match=r"cannot read the access groups of s3://[^ ]+/docs/n007\.md") as caught:
        list(source.list_objects())
    assert "SlowDown" in str(caught.value)
    looked_up = {path.split("?")[0] for method, path in fault_proxy.requests if "tagging" in path}
    # objects before it, it, and at most the look-ahead window (4 workers x 4) behind it: not all 200
    assert len(looked_up) <= 7 + 1 + 4 * 4
    assert source.request_stats["s3_retries"] >= 1


def test_server_stopped_mid_listing_is_a_listing_error_not_a_short_listing(aws_env) -> None:
    server = MotoServer()
    try:
        b = new_bucket(server.endpoint)
        for i in range(6):
            b.put(f"docs/n{i}.md", "x")
        source = _source(b, page_size=2, max_attempts=2)
        pages = source.client.get_paginator("list_objects_v2").paginate(
            Bucket=b.name, Prefix="docs/", PaginationConfig={"PageSize": 2})
        first = next(iter(pages))
        assert len(first["Contents"]) == 2 and first["IsTruncated"]  # more pages to come ...
        server.stop()  # ... from a server that is gone before the listing is done
        with pytest.raises(ListingError, match="nothing is tombstoned"):
            list(source.list_objects())
    finally:
        server.stop()


def test_listing_cut_short_mid_response_is_a_listing_error(bucket: Bucket, fault_proxy: FaultProxy) -> None:
    for i in range(5):
        bucket.put(f"docs/n{i}.md", "x")
    pages = {"n": 0}

    def cut_second_page(method: str, path: str) -> str | None:
        if "list-type" in path:
            pages["n"] += 1
            return "cut" if pages["n"] >= 2 else None
        return None

    fault_proxy.fault = cut_second_page
    with pytest.raises(ListingError):
        list(_source(bucket, endpoint=fault_proxy.endpoint, page_size=2, max_attempts=2).list_objects())


HOSTILE_KEYS = {
    "spaces": "with  some spaces .md",
    "quotes": "it's \"quoted\" `back`.md",
    "dot-dot": "hr/../public/escape.md",
    "non-ascii": "Ünïcødé/文件 名.md",
    "control-chars": "tab\there\rcarriage.md",
    "long-name": "l/" + "n" * 996 + ".md",  # 1,000 bytes after the prefix
    "zero-byte": "empty.md",
    "percent-and-plus": "100% + a&b=c?.md",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_KEYS))
def test_hostile_key_is_listed_under_its_exact_key_and_read_back_byte_for_byte(bucket: Bucket, kind: str) -> None:
    rel = HOSTILE_KEYS[kind]
    body = b"" if kind == "zero-byte" else f"body of {kind}".encode()
    bucket.put("docs/" + rel, body, tags={"rag-groups": "team"})
    source = _source(bucket)
    listed, skipped = _listing(source)
    assert list(listed) == [rel] and not skipped
    assert listed[rel].acl_groups == ("team",) and listed[rel].size == len(body)
    assert source.read(rel) == body


def test_dot_dot_key_takes_the_access_file_of_its_literal_folder_never_the_target(bucket: Bucket) -> None:
    bucket.put("docs/hr/_access.yaml", "groups: [hr]\n")
    bucket.put("docs/public/_access.yaml", "groups: [everyone]\n")
    bucket.put("docs/hr/../public/pay.md", "salary table")
    listed, _ = _listing(_source(bucket))
    assert listed["hr/../public/pay.md"].acl_groups == ("hr",)


@pytest.mark.parametrize("key", ["docs//double.md", "docs/a//b.md", "docs/./dot.md", "docs/dir/not-a-marker/"])
def test_key_with_empty_or_dot_segment_is_skipped_with_the_reason(bucket: Bucket, key: str) -> None:
    """A leading slash after the prefix ('docs//x') or a doubled one could make one folder's
    _access.yaml apply to another's objects: such keys are refused, by name, never guessed."""
    bucket.put(key, "x")
    listed, skipped = _listing(_source(bucket))
    assert not listed
    (only,) = skipped.values()
    assert "empty or '.' path segment" in only.reason


def test_folder_markers_are_not_documents(bucket: Bucket) -> None:
    bucket.put("docs/", b"")
    bucket.put("docs/sub/", b"")
    bucket.put("docs/sub/a.md", "x")
    listed, skipped = _listing(_source(bucket))
    assert list(listed) == ["sub/a.md"] and not skipped


def test_tags_with_odd_values_and_the_most_tags_s3_allows(bucket: Bucket) -> None:
    tags = {f"k{i}": f"v {i} :/=+-@." for i in range(9)}
    tags["rag-groups"] = "  team:a/b  x@y.z  a=b+c  team:a/b "
    bucket.put("docs/many.md", "x", tags=tags)
    bucket.put("docs/case.md", "x", tags={"RAG-GROUPS": "wrong-case-key"})  # tag keys are case-sensitive
    listed, _ = _listing(_source(bucket))
    assert listed["many.md"].acl_groups == ("a=b+c", "team:a/b", "x@y.z")
    assert listed["case.md"].acl_groups == ()


def test_object_acl_off_uses_only_access_files_and_makes_no_per_object_calls(bucket: Bucket) -> None:
    bucket.put("docs/_access.yaml", "groups: [all-staff]\n")
    for i in range(5):
        bucket.put(f"docs/n{i}.md", "x", tags={"rag-groups": "hr"})
    source = _source(bucket, object_acl=())
    listed, _ = _listing(source)
    assert {o.acl_groups for o in listed.values()} == {("all-staff",)}
    assert source.request_stats["s3_calls"] == 2  # one page, one access file


def test_missing_bucket_is_a_listing_error(moto_server: MotoServer) -> None:
    client, counter = make_client(endpoint_url=moto_server.endpoint)
    with pytest.raises(ListingError, match="NoSuchBucket"):
        list(S3Source("s", client, "no-such-bucket-here", "docs/", counter=counter).list_objects())


# about 10,000 uploads to moto: minutes on a busy machine
def test_bucket_of_ten_thousand_objects_is_listed_completely_across_pages(bucket: Bucket) -> None:
    from concurrent.futures import ThreadPoolExecutor

    bucket.put("docs/_access.yaml", "groups: [all-staff]\n")
    keys = [f"docs/d{i // 1000}/n{i:05d}.md" for i in range(10_000)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: bucket.client.put_object(Bucket=bucket.name, Key=key, Body=key.encode()), keys))
    source = _source(bucket, object_acl=())
    listed, skipped = _listing(source)
    assert len(listed) == 10_000 and not skipped
    assert set(listed) == {key[len("docs/"):] for key in keys}
    assert {o.acl_groups for o in listed.values()} == {("all-staff",)}
    assert source.request_stats["s3_calls"] == 11 + 1  # 10,001 keys in pages of 1,000, one access file


def test_a_deny_pattern_holds_whatever_the_case_or_unicode_form_of_the_key(bucket: Bucket) -> None:
    import unicodedata

    bucket.put(unicodedata.normalize("NFD", "docs/Entwürfe/plan.md"), "draft")
    bucket.put("docs/keys/SERVER.KEY", "x")
    bucket.put("docs/ok.md", "x")
    listed, _ = _listing(_source(bucket, default_groups=("all-staff",), deny=("*.key", "Entwürfe/*")))
    assert set(listed) == {"ok.md"}
