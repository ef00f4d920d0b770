"""Loopback receivers for alerts: an HTTP server that keeps every POSTed JSON body and a
minimal SMTP server that keeps every message, both on 127.0.0.1 in a thread of the test."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def webhook_receiver(status: int = 200) -> Iterator[tuple[str, list[dict]]]:
    """(url, received bodies); answers every POST with `status`."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"body": json.loads(body), "content_type": self.headers["Content-Type"], "path": self.path})
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hooks/rag", received
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def smtp_receiver() -> Iterator[tuple[int, list[Message]]]:
    """(port, received messages): just enough SMTP (EHLO/HELO, MAIL, RCPT, DATA, QUIT)."""
    received: list[Message] = []

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            self.wfile.write(b"220 loopback ESMTP\r\n")
            while line := self.rfile.readline():
                verb = line[:4].upper()
                if verb in (b"EHLO", b"HELO"):
                    self.wfile.write(b"250 loopback\r\n")
                elif verb == b"DATA":
                    self.wfile.write(b"354 end with .\r\n")
                    data = b""
                    while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                        data += chunk[1:] if chunk.startswith(b"..") else chunk
                    received.append(message_from_bytes(data))
                    self.wfile.write(b"250 queued\r\n")
                elif verb == b"QUIT":
                    self.wfile.write(b"221 bye\r\n")
                    return
                else:
                    self.wfile.write(b"250 ok\r\n")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], received
    finally:
        server.shutdown()
        server.server_close()
