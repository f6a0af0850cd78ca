"""A server that reads stdin and never answers anything (handshake-timeout test).

Plain Python, no SDK import. By default it exits quietly when stdin reaches
EOF (so a normal client shutdown is quick). Options for shutdown tests:

- ``--ignore-eof``: keep running after stdin closes (the client must signal it);
- ``--ignore-sigterm``: ignore SIGTERM too (only SIGKILL stops it).

Run: ``python -m tests.servers.hang [--ignore-eof] [--ignore-sigterm]``
"""

import argparse
import signal
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ignore-eof", action="store_true", help="keep running after stdin EOF")
    parser.add_argument("--ignore-sigterm", action="store_true", help="ignore SIGTERM")
    args = parser.parse_args()

    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    for _line in sys.stdin.buffer:
        pass  # swallow every request, answer nothing

    while args.ignore_eof:
        time.sleep(3600)


if __name__ == "__main__":
    main()
