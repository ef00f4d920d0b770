"""S3 source against folder source at 10,000 objects: initial listing and no-op plan, side by side.

A bucket on a real S3 API (moto's server mode on loopback) and a folder each get N tiny
generated text documents (default 10,000) under one `_access.yaml`; the bucket's objects also
carry a `rag-groups` tag. Printed per source kind, measured in the same run:

- listing: one full `list_objects()` (S3: paginated listing + one tag look-up per object,
  `concurrent_requests` (16) at a time; folder: walk + SHA-256 of every file), plus, for S3, the
  same with one look-up at a time (`concurrent_requests: 1`, the baseline of the thread pool) and
  the listing alone (`object_acl: []`);
- no-op plan: the plan step over an index that already holds every document unchanged (what
  every scheduled sync of an unchanged source pays). The index is seeded by one plan run whose
  items are staged as versions without chunks and published: parsing and embedding 10,000
  documents is not what this measures.

The folder source is the baseline (ratio = S3 / folder). moto (`moto_server`, its own process)
runs on this busy machine, so absolute S3 figures are a lower bound for neither a real bucket's latency nor its
throughput; the ratio and the request counts are what carry over.

    python bench/bench_s3.py                  # 10,000 objects and files (a few minutes)
    python bench/bench_s3.py --count 1000     # quicker
    python bench/bench_s3.py --listing-only   # listings only (the seeding for the no-op plan is slow)
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                   "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull})  # moto takes any

import numpy as np

from rag_pipeline import store
from rag_pipeline.chunking.chunks import CHUNKER_VERSION
from rag_pipeline.cleaning.clean import CLEANER_VERSION
from rag_pipeline.common.s3 import make_client
from rag_pipeline.config import config_from_dict
from rag_pipeline.embedding import load_embedder
from rag_pipeline.sources import open_source
from rag_pipeline.sync import plan, publish
from rag_pipeline.sync.context import SyncContext, prepare_database


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit(f"moto_server did not start on port {port} within {seconds:.0f} s")


def text(i: int) -> str:
    return f"# Note {i}\n\nGenerated note number {i} for the listing benchmark.\n"


def fill_bucket(endpoint: str, bucket: str, count: int) -> None:
    client, _ = make_client(endpoint_url=endpoint)
    client.create_bucket(Bucket=bucket)
    client.put_object(Bucket=bucket, Key="docs/_access.yaml", Body=b"groups: [all-staff]\n")

    def put(i: int) -> None:
        client.put_object(Bucket=bucket, Key=f"docs/d{i // 1000:02d}/n{i:05d}.md", Body=text(i).encode(),
                          Tagging="rag-groups=all-staff")

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, range(count)))


def fill_folder(root: Path, count: int) -> None:
    root.mkdir(parents=True)
    (root / "_access.yaml").write_text("groups: [all-staff]\n")
    for i in range(count):
        folder = root / f"d{i // 1000:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"n{i:05d}.md").write_text(text(i))


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def seed_index(ctx: SyncContext, model_id: int, source: str, dim: int) -> None:
    """Plan once, then stage every planned item as a chunkless version and publish it."""
    plan.plan_run(ctx, model_id, [source])
    with ctx.connect() as conn:
        keys = store.work_items.item_keys(conn, ctx.run_id, "planned", ("new",))
        for batch_start in range(0, len(keys), 500):
            for item in store.work_items.load_items(conn, ctx.run_id, keys[batch_start:batch_start + 500], ()):
                fields = {"checksum": item["checksum"], "blob_sha256": item["blob_sha256"],
                          "size_bytes": item["size_bytes"], "acl_groups": item["acl_groups"],
                          "parser_version": plan.parser_version_for_name(item["uri"]),
                          "cleaner_version": CLEANER_VERSION, "chunker_version": CHUNKER_VERSION,
                          "model_id": model_id}
                store.versions.stage_content_version(conn, ctx.run_id, item["source"], item["uri"], fields, [],
                                                     np.zeros((0, dim), np.float32))
        store.runs.update_run(conn, ctx.run_id, gate_passed=True)
    publish.publish_run(ctx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="objects and files (default 10,000)")
    parser.add_argument("--listing-only", action="store_true", help="skip the seeded no-op plan (the slow part)")
    args = parser.parse_args()
    port = free_port()
    # its own process (threaded), so the server does not share this process's GIL with the client
    server = subprocess.Popen([str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    wait_for(port)
    work = Path(tempfile.mkdtemp(prefix="rag-bench-s3-"))
    work.chmod(0o755)
    try:
        started = time.perf_counter()
        fill_bucket(endpoint, "bench", args.count)
        fill_folder(work / "docs", args.count)
        print(f"setup: {args.count} objects uploaded and {args.count} files written in {time.perf_counter() - started:.1f} s")
        sources = [
            {"name": "bucket", "kind": "s3", "bucket": "bench", "prefix": "docs/", "endpoint_url": endpoint},
            {"name": "bucket-one-at-a-time", "kind": "s3", "bucket": "bench", "prefix": "docs/",
             "endpoint_url": endpoint, "concurrent_requests": 1},
            {"name": "bucket-listing-only", "kind": "s3", "bucket": "bench", "prefix": "docs/",
             "endpoint_url": endpoint, "object_acl": []},
            {"name": "folder", "kind": "filesystem", "path": str(work / "docs")},
        ]
        config = config_from_dict({"state_dir": str(work / "state"), "sources": sources}, None, root=work)
        listing: dict[str, float] = {}
        calls: dict[str, int] = {}
        for source_config in config.sources:
            source = open_source(source_config, config.limits.max_bytes)
            seconds, objects = timed(lambda: list(source.list_objects()))  # noqa: B023
            assert len(objects) == args.count, (source_config.name, len(objects))
            listing[source_config.name] = seconds
            calls[source_config.name] = getattr(source, "request_stats", {}).get("s3_calls", 0)
            print(f"listing {source_config.name}: {seconds:.2f} s, {calls[source_config.name]} S3 calls", flush=True)
        if args.listing_only:
            report(args.count, listing, calls, None)
            return
        url = prepare_database(config)
        embedder = load_embedder()
        with SyncContext(config, url, "x").connect() as conn:
            model_id = store.models.register_model(conn, embedder.identity.to_dict())
        noop: dict[str, float] = {}
        for name in ("bucket", "folder"):
            seed_s, _ = timed(lambda: seed_index(SyncContext(config, url, f"seed-{name}"), model_id, name,  # noqa: B023
                                                 embedder.identity.dimension))
            seconds, result = timed(lambda: plan.plan_run(SyncContext(config, url, f"noop-{name}"), model_id, [name]))  # noqa: B023
            assert result.counts["unchanged"] == args.count, result.counts
            publish.fail_run(SyncContext(config, url, f"noop-{name}"), status="failed", reason="bench: plan only")
            noop[name] = seconds
            print(f"seeded {name}: first plan (downloads/reads every document) + chunkless publish in {seed_s:.1f} s; "
                  f"no-op plan {seconds:.2f} s", flush=True)
        report(args.count, listing, calls, noop)
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def report(count: int, listing: dict[str, float], calls: dict[str, int], noop: dict[str, float] | None) -> None:
    folder_list = listing["folder"]
    print(f"\n{count} documents            {'S3 (tags)':>12} {'S3 (no tags)':>13} {'folder':>9} {'S3/folder':>10}")
    print(f"initial listing, s       {listing['bucket']:12.2f} {listing['bucket-listing-only']:13.2f} "
          f"{folder_list:9.2f} {listing['bucket'] / folder_list:10.1f}x")
    sequential = listing["bucket-one-at-a-time"]
    print(f"  tags one at a time, s  {sequential:12.2f}   (parallel look-ups: {sequential / listing['bucket']:.2f}x faster)")
    if noop is not None:
        print(f"no-op plan step, s       {noop['bucket']:12.2f} {'':>13} {noop['folder']:9.2f} "
              f"{noop['bucket'] / noop['folder']:10.1f}x")
    print(f"S3 API calls per listing {calls['bucket']:12d} {calls['bucket-listing-only']:13d}")
    print(f"documents/s listed       {count / listing['bucket']:12.0f} {count / listing['bucket-listing-only']:13.0f} "
          f"{count / folder_list:9.0f}")


if __name__ == "__main__":
    main()
