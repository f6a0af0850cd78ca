"""A recording wrapper placed as a server's ``command``: records the JSON-RPC on the wire.

``python -m tests.servers.wiretap DIR -- COMMAND [ARGS...]`` starts COMMAND with pipes, copies
codebot's stdin to it and its stdout back, line by line, and writes one JSON record per line
to a file of this launch in DIR (``<start time in ns>-<pid>.jsonl``: launches sort in the
order they started, and a fallback's second launch never mixes with the first):

- ``{"dir": ">", "msg": ...}`` for what codebot sent, ``{"dir": "<", "msg": ...}`` for what
  the server answered;
- a line that is not JSON as ``{"dir": ..., "raw": <its first 200 characters>}``, a line over
  64 KiB as ``{"dir": ..., "size": <bytes>, "head": <its first 200 characters>}`` (a 40 MB
  answer is not copied into the log);
- when both directions have ended (codebot closed stdin, the server closed stdout) and the
  server has exited, ``{"end": <exit code>}``; when codebot ends it with SIGTERM instead (a
  server that does not stop when its stdin closes, or whose output nobody reads any more),
  ``{"end": "SIGTERM"}``. A test waits for it before reading the file, so nothing sent in the
  last moment is missed.

The server's stderr is the wrapper's (codebot logs it). Each of the server's output streams
ends for codebot when the server's does (its stdout when the server closes it, stderr when it
exits), not when the wrapper exits: a server that dies on its own is seen to die at once, as
it would be without the wrapper, which then waits (up to 5 s) for codebot to close stdin.
Standard library only; no SDK import.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

BIG = 64 * 1024
"""Lines longer than this are recorded by size and head only."""


def _record(log: IO[str], lock: threading.Lock, record: dict[str, Any]) -> None:
    with lock:
        log.write(json.dumps(record) + "\n")
        log.flush()


def _message(line: bytes) -> dict[str, Any]:
    if len(line) > BIG:
        return {"size": len(line), "head": line[:200].decode("utf-8", "replace")}
    try:
        return {"msg": json.loads(line)}
    except ValueError:
        return {"raw": line[:200].decode("utf-8", "replace")}


def _copy(
    source: IO[bytes], sink: IO[bytes], direction: str, log: IO[str], lock: threading.Lock
) -> None:
    try:
        for line in source:
            if line.strip():
                _record(log, lock, {"dir": direction, **_message(line.rstrip(b"\r\n"))})
            sink.write(line)
            sink.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            sink.close()
        except OSError:
            pass


def _let_go(fd: int) -> None:
    """End codebot's pipe on ``fd`` as the server's own exit ends it (``/dev/null`` takes its
    place): codebot sees the server's streams end when they do, not when the wrapper exits."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main() -> int:
    log_path, separator, *command = sys.argv[1:]
    if separator != "--" or not command:
        sys.stderr.write("usage: python -m tests.servers.wiretap DIR -- COMMAND [ARGS...]\n")
        return 2
    lock = threading.Lock()
    directory = Path(log_path)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns()}-{os.getpid()}.jsonl"
    with open(directory / name, "x", encoding="utf-8") as log:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert child.stdin is not None and child.stdout is not None
        threads = [
            threading.Thread(
                target=_copy, args=(sys.stdin.buffer, child.stdin, ">", log, lock), daemon=True
            ),
            threading.Thread(
                target=_copy, args=(child.stdout, sys.stdout.buffer, "<", log, lock), daemon=True
            ),
        ]

        def terminated(_signo: int, _frame: object) -> None:
            _record(log, lock, {"end": "SIGTERM"})
            os._exit(143)

        signal.signal(signal.SIGTERM, terminated)
        for thread in threads:
            thread.start()
        threads[1].join()  # the server's stdout ended: it exited, or is about to
        _let_go(1)  # ...and so does ours (closing sys.stdout.buffer leaves the descriptor open)
        code = child.wait()
        _let_go(2)  # the server's stderr was ours: it ends with the server
        threads[0].join(timeout=5)  # codebot's stdin closes once it sees the end
        _record(log, lock, {"end": code})
    return code


if __name__ == "__main__":
    sys.exit(main())
