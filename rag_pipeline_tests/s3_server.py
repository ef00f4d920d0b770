"""A real S3 API for tests: moto's server mode on loopback (a real HTTP endpoint that boto3
talks to over sockets; nothing in boto3 is patched), and a loopback proxy that injects the
faults a healthy server never produces on demand (throttling, cut-short responses)."""

from __future__ import annotations

import http.client
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MotoServer:
    """moto's threaded server on 127.0.0.1 with a free port; stop() is a real server stop."""

    def __init__(self) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise

        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.running = True

    def stop(self) -> None:
        if self.running:
            self._server.stop()
            self.running = False


@pytest.fixture(scope="session")
def aws_env() -> Iterator[None]:
    """Dummy credentials for boto3's standard chain (moto accepts any) and no real AWS config."""
    saved = {k: os.environ.get(k) for k in [*DUMMY_ENV, "AWS_PROFILE", "AWS_ENDPOINT_URL"]}
    os.environ.pop("AWS_PROFILE", None)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    os.environ.update(DUMMY_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="session")
def moto_server(aws_env: None) -> Iterator[MotoServer]:
    server = MotoServer()
    yield server
    server.stop()


def client_for(endpoint: str) -> Any:
    import boto3

    return boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1")


@dataclass
class Bucket:
    """A fresh bucket on the test server, with the operations tests use to change it."""

    client: Any
    name: str
    endpoint: str

    def put(self, key: str, body: bytes | str = b"", *, tags: dict[str, str] | None = None,
            metadata: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        extra: dict[str, Any] = {}
        if tags is not None:
            from urllib.parse import urlencode

            extra["Tagging"] = urlencode(tags)
        if metadata is not None:
            extra["Metadata"] = metadata
        self.client.put_object(Bucket=self.name, Key=key, Body=data, **extra)

    def set_tags(self, key: str, tags: dict[str, str]) -> None:
        self.client.put_object_tagging(
            Bucket=self.name, Key=key, Tagging={"TagSet": [{"Key": k, "Value": v} for k, v in tags.items()]}
        )

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.name, Key=key)

    def etag(self, key: str) -> str:
        return str(self.client.head_object(Bucket=self.name, Key=key)["ETag"]).strip('"')


def new_bucket(endpoint: str) -> Bucket:
    client = client_for(endpoint)
    name = "rp-" + uuid.uuid4().hex[:16]
    client.create_bucket(Bucket=name)
    return Bucket(client, name, endpoint)


@pytest.fixture
def bucket(moto_server: MotoServer) -> Bucket:
    return new_bucket(moto_server.endpoint)


Fault = Callable[[str, str], "int | str | None"]  # (method, path) -> status, "cut", or None to forward


class FaultProxy:
    """An HTTP proxy on loopback in front of the S3 server. `fault(method, path)` decides per
    request: None forwards it, an int answers with that status (503 SlowDown is S3 throttling),
    "cut" forwards it but sends only half of the response body."""

    def __init__(self, upstream_port: int) -> None:
        self.fault: Fault = lambda method, path: None
        self.requests: list[tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                proxy.requests.append((self.command, self.path))
                decision = proxy.fault(self.command, self.path)
                if isinstance(decision, int):
                    payload = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
                               b"<Message>Please reduce your request rate.</Message></Error>")
                    self.send_response(decision)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                self.send_response(response.status)
                head = self.command == "HEAD"
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection") and (head or key.lower() != "content-length"):
                        self.send_header(key, value)
                if head:
                    self.end_headers()
                    upstream.close()
                    return
                if decision == "cut":
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def throttle_listings(self, times: int) -> None:
        """Answer the next `times` listing requests with 503 SlowDown (S3's throttling)."""
        left = {"n": times}

        def slow_down(method: str, path: str) -> int | None:
            if "list-type" in path and left["n"]:
                left["n"] -= 1
                return 503
            return None

        self.fault = slow_down

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def fault_proxy(moto_server: MotoServer) -> Iterator[FaultProxy]:
    proxy = FaultProxy(moto_server.port)
    yield proxy
    proxy.close()
