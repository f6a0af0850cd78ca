"""A server that dies before serving anything.

Writes ``fatal: database connection refused (this is a test server)`` to
stderr and exits with code 3 without reading stdin. Plain Python, no SDK
import, so it fails fast. Used to test that a failed handshake is reported
with the server's stderr tail and exit code.

Run: ``python -m tests.servers.crash_on_start``
"""

import sys

MESSAGE = "fatal: database connection refused (this is a test server)"


def main() -> None:
    sys.stderr.write(MESSAGE + "\n")
    sys.stderr.flush()
    sys.exit(3)


if __name__ == "__main__":
    main()
