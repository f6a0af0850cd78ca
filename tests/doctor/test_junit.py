"""`--format junit`: the XML parses, and counts what it should."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from codebot_mcp.mcpbridge.doctor.checks import CHECKS
from tests.doctor.conftest import Doctor
from tests.helpers import server_entry as entry
from tests.helpers import write_settings
from tests.servers.crash_on_start import MESSAGE as CRASH_MESSAGE

SERVER_CHECKS = [c.id for c in CHECKS if c.scope not in ("settings", "totals")]
SETTINGS_CHECKS = [c.id for c in CHECKS if c.scope == "settings"]
TOTALS_CHECKS = [c.id for c in CHECKS if c.scope == "totals"]


def cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in suite.iter("testcase")}


def test_junit_counts(doctor: Doctor) -> None:
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "lint": entry("lint_target"),
                "crash": entry("crash_on_start"),
                "off": {"command": "x", "enabled": False},
            }
        },
    )
    code, out, _ = doctor("--format", "junit")
    assert code == 1
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["mcp.settings", "mcp.crash", "mcp.lint", "mcp.off", "mcp.totals"]
    assert list(cases(suites["mcp.settings"])) == SETTINGS_CHECKS
    assert list(cases(suites["mcp.totals"])) == TOTALS_CHECKS
    for name in ("mcp.crash", "mcp.lint", "mcp.off"):
        assert list(cases(suites[name])) == SERVER_CHECKS

    crash = cases(suites["mcp.crash"])
    failure = crash["connect.handshake"].find("failure")
    assert failure is not None and failure.get("type") == "error"
    assert CRASH_MESSAGE in (failure.text or "")
    assert crash["tool.schema"].find("skipped") is not None
    assert suites["mcp.crash"].get("failures") == "1"
    assert suites["mcp.crash"].get("skipped") == str(
        len([c for c in CHECKS if c.scope in ("server", "tool")])
    )

    lint = cases(suites["mcp.lint"])
    # Only the error fails a case; warnings and notes go to the case's output.
    failed = [n for n, c in lint.items() if c.find("failure") is not None]
    assert failed == ["tool.schema"]
    out_text = lint["tool.description_length"].findtext("system-out") or ""
    assert out_text.startswith("info [long_description]: tool 'long_description'")
    assert suites["mcp.off"].get("skipped") == str(len(SERVER_CHECKS))

    total_cases = len(SETTINGS_CHECKS) + 3 * len(SERVER_CHECKS) + len(TOTALS_CHECKS)
    assert root.get("tests") == str(total_cases)
    assert root.get("failures") == "2"
    assert root.get("skipped") == str(sum(int(s.get("skipped", "0")) for s in suites.values()))

    code, out, _ = doctor("--format", "junit", "--strict", "--server", "lint")
    assert code == 1
    lint = cases(ET.fromstring(out).findall("testsuite")[1])
    failed = sorted(n for n, c in lint.items() if c.find("failure") is not None)
    assert failed == [  # tool.description_length is a note: sent whole, never a failure
        "tool.capability",
        "tool.description",
        "tool.name",
        "tool.schema",
    ]


def test_junit_for_unreadable_settings(doctor: Doctor) -> None:
    path = doctor.project / ".codebot" / "settings.json"
    path.parent.mkdir()
    path.write_text("[]")
    code, out, _ = doctor("--format", "junit")
    assert code == 3
    root = ET.fromstring(out)
    assert (root.get("tests"), root.get("failures")) == ("1", "1")
    [case] = root.iter("testcase")
    assert case.get("name") == "settings.parse"
    failure = case.find("failure")
    assert failure is not None and "must contain a JSON object" in (failure.get("message") or "")
