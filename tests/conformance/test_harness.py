"""The conformance harness itself: its baseline file, its verdicts, its browser stand-in.

The suite's own runs happen in ``make conformance``; these tests keep the pieces it relies on
honest (the baseline parses as the suite parses it, every entry names a real scenario and
gives a reason, and the runner's verdict rules hold).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conformance import run as runner

HERE = Path(__file__).resolve().parent


def _require_suite() -> None:
    if not runner.NODE.exists() or not runner.SUITE.exists():
        pytest.fail(f"{runner.SUITE} is missing: run `make install` (npm ci in tests/conformance)")


def test_baseline_parses_as_the_suite_parses_it() -> None:
    _require_suite()
    script = (
        "const y = require('yaml');"
        "const doc = y.parse(require('fs').readFileSync(process.argv[1], 'utf8'));"
        "process.stdout.write(JSON.stringify(doc.client ?? []));"
    )
    done = subprocess.run(
        [str(runner.NODE), "-e", script, str(runner.BASELINE)],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert runner.load_baseline(runner.BASELINE) == json.loads(done.stdout)


def test_every_entry_is_a_known_scenario_with_a_reason() -> None:
    _require_suite()
    known = {name for name, _ in runner.list_scenarios()}
    assert "initialize" in known and "auth/metadata-default" in known
    for raw in runner.BASELINE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line.startswith("- "):
            continue
        entry, _, reason = line[2:].partition("#")
        assert entry.strip().partition(":")[0] in known, entry
        assert len(reason.strip()) > 10, f"entry without a reason: {line}"


def test_the_suite_lists_every_spec_version_and_the_extensions() -> None:
    _require_suite()
    versions = {v for _, vs in runner.list_scenarios() for v in vs}
    assert {"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "extension"} <= versions


def _run(scenario: str, version: str, exit_code: int, *failing: str) -> runner.Run:
    checks: list[dict[str, object]] = [{"id": c, "status": "FAILURE"} for c in failing]
    checks.append({"id": "ok-check", "status": "SUCCESS"})
    return runner.Run(scenario, version, exit_code=exit_code, checks=checks)


def test_verdict_regressions_expected_and_stale() -> None:
    runs = [
        _run("a", "2025-11-25", 0),
        _run("a", "2026-07-28", 1, "x"),  # listed as a whole scenario: expected
        _run("b", "2026-07-28", 1, "y", "z"),  # only y is listed: z is a regression
        _run("c", "2026-07-28", 1, "y"),  # check listed: expected
        _run("d", "2026-07-28", 1),  # no failing check (client exit): a regression
        _run("e", "2026-07-28", 0),  # listed but passing: stale
    ]
    entries = ["a", "b:y", "c:y", "e", "c:never-fails", "zzz"]
    verdict = runner.judge(runs, entries, known={"a", "b", "c", "d", "e"})
    assert [r.label for r in verdict.unexpected] == ["b @ 2026-07-28", "d @ 2026-07-28"]
    assert [r.label for r in verdict.expected] == ["a @ 2026-07-28", "c @ 2026-07-28"]
    assert verdict.stale == ["e", "c:never-fails"]
    assert verdict.unknown == ["zzz"]


def test_baseline_syntax_errors_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "baseline.yml"
    bad.write_text("client:\n  auth/x\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"baseline.yml:2"):
        runner.load_baseline(bad)
    good = tmp_path / "ok.yml"
    good.write_text("# c\nclient:\n  - a  # why\n  - 'b:c'\nserver: []\n", encoding="utf-8")
    assert runner.load_baseline(good) == ["a", "b:c"]


class _Hops(BaseHTTPRequestHandler):
    """/authorize redirects to /callback (as an authorization server does); /callback records."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path.startswith("/authorize"):
            self.send_response(302)
            self.send_header("Location", "/callback?code=abc&state=s1")
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"signed in")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hops() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Handler", (_Hops,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_browser_stand_in_follows_the_redirect_to_the_callback(
    hops: tuple[str, list[str]],
) -> None:
    base, seen = hops
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(HERE / "browser.py"), f"{base}/authorize?x=1"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    while "/callback?code=abc&state=s1" not in seen and time.monotonic() - started < 20:
        time.sleep(0.05)  # the stand-in returns at once, like a browser launcher; it loads later
    assert seen == ["/authorize?x=1", "/callback?code=abc&state=s1"]


def test_client_maps_the_scenario_context_to_codebot_settings() -> None:
    from tests.conformance import client, scenarios

    assert client.protocol_setting("2025-03-26") == "legacy"
    assert client.protocol_setting("2025-11-25") == "legacy"
    assert client.protocol_setting("2026-07-28") == "auto"
    jwt = scenarios.oauth_settings(
        "auth/client-credentials-jwt",
        {"client_id": "c1", "private_key_pem": "PEM", "signing_algorithm": "RS256"},
    )
    assert jwt == {
        "grant": "client_credentials",
        "client_id": "c1",
        "private_key": "PEM",
        "signing_algorithm": "RS256",
    }
    basic = scenarios.oauth_settings(
        "auth/client-credentials-basic", {"client_id": "c", "client_secret": "s"}
    )
    assert basic == {"grant": "client_credentials", "client_id": "c", "client_secret": "s"}
    pre = scenarios.oauth_settings(
        "auth/pre-registration", {"client_id": "c", "client_secret": "s"}
    )
    assert pre == {"client_id": "c", "client_secret": "s"}
    assert scenarios.oauth_settings("auth/basic-cimd", {}) == {
        "client_metadata_url": scenarios.CLIENT_METADATA_URL
    }
    schema = {"properties": {"a": {"type": "integer"}, "b": {}}, "required": ["a", "b"]}
    assert scenarios.stub_arguments(schema) == {"a": 0, "b": "x"}
