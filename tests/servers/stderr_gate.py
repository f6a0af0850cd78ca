"""A server that says one line on stderr, waits for a gate file, then dies without serving.

``--say TEXT`` is written to stderr at once; then ``<gate>.<TEXT>.ready`` is created (so a
test knows the line is out), the server waits (up to 60 s) until ``--gate PATH`` exists,
and exits with code 1 without reading stdin. Two runs of it under one server name, at once,
show whether each run's failure quotes its own stderr.

Run: ``python -m tests.servers.stderr_gate --say TEXT --gate PATH``
"""

import argparse
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--say", required=True)
    parser.add_argument("--gate", type=Path, required=True)
    args = parser.parse_args()
    sys.stderr.write(args.say + "\n")
    sys.stderr.flush()
    Path(f"{args.gate}.{args.say}.ready").touch()
    deadline = time.monotonic() + 60
    while not args.gate.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    sys.exit(1)


if __name__ == "__main__":
    main()
