"""HTTP for the registry: one bounded GET for JSON and one for downloads.

Every request has a deadline (a stalled registry must not hang a search), every body a size
cap (a hostile one must not fill memory or disk), and a redirect may not leave https. The
standard library's ``urllib`` does the work: codebot's core has no HTTP client of its own
(the SDK's belongs to ``mcpbridge``), and one GET needs none.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import time
import urllib.error
import urllib.request
from typing import IO, Any

from codebot_mcp.core.errors import CodebotError, ExitCode
from codebot_mcp.core.secrets.redact import printable, redact_url

REQUEST_TIMEOUT_SECONDS = 10.0
"""Per request, connection and every read together: a registry answers in well under a
second; one that stalls must not hang ``mcp search`` or ``mcp doctor``."""
DOWNLOAD_TIMEOUT_SECONDS = 300.0
"""A bundle is megabytes, on links slower than a registry's API."""
MAX_JSON_BYTES = 8 << 20
"""A page of 100 servers is a few hundred KB; a body past 8 MiB is not a registry's answer."""
MAX_DOWNLOAD_BYTES = 256 << 20
"""An MCP bundle (``.mcpb``) with its ``node_modules`` runs to tens of MB."""
MAX_REDIRECTS = 5
_CHUNK = 1 << 16


class RegistryError(CodebotError):
    """A registry could not be reached, or answered something that is not a registry's answer."""

    exit_code = ExitCode.TOOL_ERROR


class NotFoundError(RegistryError):
    """The registry answered 404: it has no such server (or version)."""


def user_agent() -> str:
    """``codebot/<version>``."""
    from codebot_mcp.core import __version__

    return f"codebot/{__version__}"


class _NoDowngrade(urllib.request.HTTPRedirectHandler):
    """Follows at most :data:`MAX_REDIRECTS` redirects, never from https to http."""

    max_redirections = MAX_REDIRECTS

    def redirect_request(  # type: ignore[override]
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        if req.full_url.startswith("https:") and not newurl.startswith("https:"):
            raise urllib.error.URLError(f"refused a redirect from https to {redact_url(newurl)}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _open(url: str, timeout: float, accept: str) -> Any:
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": user_agent()})
    opener = urllib.request.build_opener(_NoDowngrade())
    return opener.open(request, timeout=timeout)


def _read(response: Any, sink: IO[bytes] | None, limit: int, deadline: float, url: str) -> bytes:
    """The body, in chunks, within ``limit`` bytes and the deadline (into ``sink`` if given)."""
    length = response.headers.get("Content-Length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise RegistryError(
            f"{_shown(url)} answered {int(length)} bytes, more than the {limit >> 20} MiB "
            "codebot accepts",
            hint="A registry's answer is far smaller; check registry_url.",
        )
    chunks: list[bytes] = []
    total = 0
    while True:
        if time.monotonic() > deadline:
            raise RegistryError(f"{_shown(url)} did not finish answering in time")
        chunk = response.read1(_CHUNK)  # what has arrived: a slow drip still meets the deadline
        if not chunk:
            if length is not None and length.isdigit() and total < int(length):
                raise RegistryError(
                    f"{_shown(url)} stopped answering after {total} of {length} bytes",
                    hint="Try again; check your connection.",
                )
            break
        total += len(chunk)
        if total > limit:
            raise RegistryError(
                f"{_shown(url)} sent more than the {limit >> 20} MiB codebot accepts",
                hint="A registry's answer is far smaller; check registry_url.",
            )
        if sink is None:
            chunks.append(chunk)
        else:
            sink.write(chunk)
    return b"".join(chunks)


def _shown(url: str) -> str:
    return printable(redact_url(url), one_line=True)


def _failure(url: str, exc: Exception) -> RegistryError:
    """A registry error for an exception of ``urllib`` (404 becomes :class:`NotFoundError`)."""
    if isinstance(exc, urllib.error.HTTPError):
        detail = ""
        try:
            body = json.loads(exc.read(4096) or b"{}")
            if isinstance(body, dict) and isinstance(body.get("error"), str):
                detail = f": {printable(body['error'][:200], one_line=True)}"
        except (OSError, ValueError):
            pass
        kind = NotFoundError if exc.code == 404 else RegistryError
        return kind(f"{_shown(url)} answered HTTP {exc.code}{detail}")
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    return RegistryError(
        f"cannot reach {_shown(url)}: {printable(str(reason), one_line=True)}",
        hint="Check your connection and the registry_url setting.",
    )


def get_json(url: str, *, timeout: float = REQUEST_TIMEOUT_SECONDS) -> Any:
    """GET ``url`` and parse its JSON body, within the timeout and :data:`MAX_JSON_BYTES`.

    Raises:
        NotFoundError: the answer is 404.
        RegistryError: no answer in time, another error status, too big, or not JSON.
    """
    deadline = time.monotonic() + timeout
    try:
        with _open(url, timeout, "application/json") as response:
            body = _read(response, None, MAX_JSON_BYTES, deadline, url)
    except RegistryError:
        raise
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise _failure(url, exc) from None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise RegistryError(
            f"{_shown(url)} did not answer JSON",
            hint="Check that registry_url is an MCP Registry's base URL (it serves /v0.1/servers).",
        ) from None


def download(url: str, sink: IO[bytes], *, timeout: float = DOWNLOAD_TIMEOUT_SECONDS) -> str:
    """GET ``url`` into ``sink`` (at most :data:`MAX_DOWNLOAD_BYTES`); returns its sha256 (hex).

    Raises:
        RegistryError: it cannot be fetched in time, or is too big.
    """
    deadline = time.monotonic() + timeout
    digest = hashlib.sha256()

    class _Hashing:
        def write(self, data: bytes) -> None:
            digest.update(data)
            sink.write(data)

    try:
        with _open(url, timeout, "*/*") as response:
            _read(response, _Hashing(), MAX_DOWNLOAD_BYTES, deadline, url)  # type: ignore[arg-type]
    except RegistryError:
        raise
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise _failure(url, exc) from None
    return digest.hexdigest()
