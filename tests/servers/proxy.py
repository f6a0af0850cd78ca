"""A forward HTTP proxy on 127.0.0.1 (standard library only), for the proxy tests.

Takes absolute-URI requests (``POST http://127.0.0.1:PORT/mcp HTTP/1.1``), forwards them to
the origin and streams the answer back as it arrives (SSE keeps working), closing the
connection at the end. Each request's method and URL is appended to ``--log``.

Run: ``python -m tests.servers.proxy --log FILE``; prints ``READY http://127.0.0.1:<port>``.
"""

from __future__ import annotations

import argparse
import http.client
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade"}
LOG_LOCK = threading.Lock()


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_file = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _forward(self) -> None:
        with LOG_LOCK, open(self.log_file, "a", encoding="utf-8") as log:
            log.write(f"{self.command} {self.path}\n")
        target = urllib.parse.urlsplit(self.path)
        if not target.hostname:
            self.send_error(400, "absolute URI required (this is a proxy)")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=300)
        path = target.path + (f"?{target.query}" if target.query else "")
        upstream.request(self.command, path or "/", body=body, headers=headers)
        answer = upstream.getresponse()
        self.send_response(answer.status, answer.reason)
        for key, value in answer.getheaders():
            if key.lower() not in HOP:
                self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        while data := answer.read1(65536):
            self.wfile.write(data)
            self.wfile.flush()
        upstream.close()

    do_GET = do_POST = do_DELETE = _forward


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    Proxy.log_file = args.log
    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
