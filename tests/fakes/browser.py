#!/usr/bin/env python3
"""A headless browser stand-in for ``$BROWSER``: fetch the URL, follow every redirect.

``webbrowser`` runs ``$BROWSER URL``; this script GETs the authorization URL and follows the
authorization server's redirect to codebot's loopback callback, as a user clicking "allow"
would. It appends one JSON line per run to ``$FAKE_BROWSER_LOG`` (when set): the URL it was
given, the final status and the page's text, so tests can check what the user saw.
Standard library only: ``webbrowser`` runs it as a plain executable.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request


def main() -> int:
    url = sys.argv[1]
    record: dict[str, object] = {"url": url}
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=30) as response:
            record.update(status=response.status, page=response.read(4000).decode())
    except urllib.error.HTTPError as exc:
        record.update(status=exc.code, page=exc.read(4000).decode())
    except OSError as exc:
        record.update(status=None, page=f"{type(exc).__name__}: {exc}")
    log = os.environ.get("FAKE_BROWSER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
