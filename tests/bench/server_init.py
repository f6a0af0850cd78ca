"""The server's own start-up: spawn to its ``initialize`` answer, in seconds (``make bench``).

Run: ``python tests/bench/server_init.py COMMAND [ARGS...]``. Standard library only; prints the
seconds from just before the spawn to the answer's arrival, then closes the server's stdin and
kills it (its shutdown is not part of the figure).
"""

import json
import os
import subprocess
import sys
import time

request = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
started = time.perf_counter()
server = subprocess.Popen(
    sys.argv[1:],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    stderr=subprocess.DEVNULL,
    start_new_session=True,
)
assert server.stdin is not None and server.stdout is not None
server.stdin.write(json.dumps(request).encode() + b"\n")
server.stdin.flush()
for line in server.stdout:
    if b'"id":1' in line.replace(b" ", b""):
        break
elapsed = time.perf_counter() - started
print(f"{elapsed:.6f}")
server.stdin.close()
os.killpg(server.pid, 9)
server.wait()
