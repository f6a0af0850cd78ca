"""An HTTP "MCP server" whose answers are gzip bombs (standard library only).

Every POST is answered with a JSON-RPC result for the request's id whose text is ``--size``
bytes once inflated, sent gzip-compressed (about 0.1 % of that) with ``Content-Encoding:
gzip``, although the client asked for no compression.

Run: ``python -m tests.servers.gzip_bomb [--size BYTES]``; prints
``READY http://127.0.0.1:<port>/mcp``.
"""

from __future__ import annotations

import argparse
import json
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Bomb(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    size = 0

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        head = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": {"pad": ""}})
        before, after = head.rsplit('""', 1)
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        body = packer.compress((before + '"').encode())
        chunk = b"a" * 2**20
        for _ in range(self.size // len(chunk)):
            body += packer.compress(chunk)
        body += packer.compress(('"' + after).encode()) + packer.flush()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=200 * 2**20)
    args = parser.parse_args()
    Bomb.size = args.size
    server = ThreadingHTTPServer(("127.0.0.1", 0), Bomb)
    server.daemon_threads = True
    print(f"READY http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
