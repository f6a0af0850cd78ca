"""The client command the MCP conformance suite starts: it drives codebot's real CLI.

The harness runs ``python tests/conformance/client.py <server-url>`` once per scenario, with
``MCP_CONFORMANCE_SCENARIO``, ``MCP_CONFORMANCE_PROTOCOL_VERSION`` and, for some scenarios,
``MCP_CONFORMANCE_CONTEXT`` (JSON) in the environment. This script is not an MCP client: it
writes a throwaway ``CODEBOT_HOME`` whose settings.json has one http server ("conformance") for
that URL, maps the scenario and its context to codebot settings (``protocol``, ``oauth``), and
runs ``codebot mcp list`` / ``codebot mcp call`` (``--batch``, ``--login``, ``--elicit``) as
subprocesses, doing per scenario the work the Python SDK's own conformance client does.

It exits with the first failing codebot exit code (0 when every step that must succeed did);
steps the SDK's client also treats as best-effort (calls that may be refused) never fail it.
``CONFORMANCE_DEBUG=1`` adds ``--debug`` to every codebot command (tracebacks, SDK logs).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

if not __package__:  # run as a script by the harness: make ``tests.conformance`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conformance.codebot_cli import Codebot, log
from tests.conformance.scenarios import SCENARIOS, oauth_settings, run_auth

# The spec versions that use the initialize handshake (the SDK's HANDSHAKE_PROTOCOL_VERSIONS).
HANDSHAKE_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


def context() -> dict[str, Any]:
    text = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        log("MCP_CONFORMANCE_CONTEXT is not JSON; ignored")
        return {}
    return value if isinstance(value, dict) else {}


def protocol_setting(version: str | None) -> str:
    """codebot's ``protocol`` for the harness's wire, as the SDK's client picks its mode.

    Handshake-era legs run ``initialize`` only (no ``server/discover`` probe sent to a mock that
    would reject it); modern legs (2026-07-28) use ``auto``, which probes and adopts.
    """
    return "legacy" if version in HANDSHAKE_VERSIONS else "auto"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(f"usage: {argv[0]} SERVER_URL (run by the conformance suite)", file=sys.stderr)
        return 2
    server_url = argv[-1]
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    ctx = context()
    log(f"scenario {name!r} at protocol {version!r} against {server_url}")
    home = Path(tempfile.mkdtemp(prefix="codebot-conformance-"))
    cb = Codebot(home, server_url, name)
    signal.signal(signal.SIGTERM, lambda *_: (cb.stop(), sys.exit(143)))
    try:
        entry: dict[str, Any] = {"protocol": protocol_setting(version), "timeout": 40}
        if name == "json-schema-ref-no-deref":
            # As in the SDK's client: this mock speaks only the handshake era, whatever the leg.
            entry["protocol"] = "legacy"
        if name.startswith("auth/"):
            entry["oauth"] = oauth_settings(name, ctx)
        cb.write_settings(entry)
        handler = SCENARIOS.get(name)
        if handler is None and name.startswith("auth/"):
            handler = run_auth
        if handler is None:
            log(f"unknown scenario {name!r}")
            return 1
        handler(cb, ctx)
        return cb.first_failure
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
