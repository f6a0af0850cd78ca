"""A headless stand-in for a web browser, for ``$BROWSER`` in OAuth tests (stdlib only).

Python's ``webbrowser`` runs ``$BROWSER`` with the authorization URL in place of ``%s``. Like a
real browser launcher this returns at once: a detached child GETs the URL, follows every
redirect (the authorization server answers with one to the client's loopback callback) and
GETs that callback, which is what a person's browser does after they approve. Every wait is
bounded; what happened goes to stderr.

Usage: ``BROWSER="python tests/conformance/browser.py %s"``.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request

# One page load (the authorization server, then the loopback callback) may take this long.
FETCH_TIMEOUT_SECONDS = 20.0


def log(message: str) -> None:
    print(f"[headless browser] {message}", file=sys.stderr, flush=True)


def fetch(url: str) -> int:
    """GET ``url`` and follow its redirects (at most 10, urllib's limit); 0 on a 2xx/3xx end."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=FETCH_TIMEOUT_SECONDS) as response:
            log(f"{response.status} from {response.url}")
            return 0
    except urllib.error.HTTPError as exc:
        log(f"{exc.code} from {exc.url}: {exc.read(300).decode('utf-8', 'replace')!r}")
        return 1
    except (urllib.error.URLError, OSError) as exc:
        log(f"could not load {url}: {exc}")
        return 1


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--fetch":
        return fetch(argv[2])
    if len(argv) != 2:
        print(f"usage: {argv[0]} URL", file=sys.stderr)
        return 2
    log(f"opening {argv[1]}")
    subprocess.Popen(
        [sys.executable, __file__, "--fetch", argv[1]],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
