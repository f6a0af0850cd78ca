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
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER = "conformance"
HERE = Path(__file__).resolve().parent
# The spec versions that use the initialize handshake (the SDK's HANDSHAKE_PROTOCOL_VERSIONS).
HANDSHAKE_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
# The SDK's conformance client uses this Client ID Metadata Document URL; the harness accepts it.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
# Each codebot command is bounded well inside the harness's per-scenario timeout.
STEP_TIMEOUT_SECONDS = 75.0
# Arguments that satisfy a required property of each JSON type (as the SDK's client does).
STUB_BY_TYPE: dict[str, Any] = {
    "string": "x",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "object": {},
    "array": [],
    "null": None,
}


def log(message: str) -> None:
    print(f"[conformance client] {message}", file=sys.stderr, flush=True)


class Codebot:
    """Runs the real ``codebot`` CLI against one throwaway home."""

    def __init__(self, home: Path, server_url: str, scenario: str) -> None:
        self.home = home
        self.server_url = server_url
        self.scenario = scenario
        self.first_failure = 0
        exe = Path(sys.executable).with_name("codebot")
        self.argv0 = [str(exe)] if exe.exists() else [sys.executable, "-m", "codebot_mcp.cli"]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBOT_")}
        self.env["CODEBOT_HOME"] = str(home)
        # The headless browser stand-in: fetches the authorization URL, follows the redirects
        # to codebot's loopback callback (webbrowser puts the URL in place of %s).
        self.env["BROWSER"] = (
            f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'browser.py'))} %s"
        )
        self.env["NO_PROXY"] = "127.0.0.1,localhost"
        self.debug = os.environ.get("CONFORMANCE_DEBUG") == "1"
        self._help: dict[str, str] = {}
        self._proc: subprocess.Popen[str] | None = None

    def write_settings(self, entry: dict[str, Any]) -> None:
        server = {"type": "http", "url": self.server_url, **entry}
        settings = {"mcp_servers": {SERVER: server}}
        (self.home / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
        log(f"settings: {json.dumps(_masked(settings))}")

    def supports(self, command: str, flag: str) -> bool:
        """Whether ``codebot mcp COMMAND --help`` documents ``flag`` (features land over time)."""
        if command not in self._help:
            done = subprocess.run(
                [*self.argv0, "mcp", command, "--help"],
                capture_output=True,
                text=True,
                env=self.env,
                timeout=STEP_TIMEOUT_SECONDS,
                check=False,
            )
            self._help[command] = done.stdout
        return flag in self._help[command]

    def has_command(self, name: str) -> bool:
        """Whether ``codebot mcp --help`` lists the subcommand ``name``."""
        if "" not in self._help:
            done = subprocess.run(
                [*self.argv0, "mcp", "--help"],
                capture_output=True,
                text=True,
                env=self.env,
                timeout=STEP_TIMEOUT_SECONDS,
                check=False,
            )
            self._help[""] = done.stdout
        return re.search(rf"^\s+{re.escape(name)}\b", self._help[""], re.MULTILINE) is not None

    def run(self, *args: str, stdin: str | None = None, must_succeed: bool = True) -> str:
        """Run ``codebot --cwd HOME ARGS...``; return its stdout."""
        argv = [*self.argv0, "--cwd", str(self.home), *(["--debug"] if self.debug else []), *args]
        log(f"$ codebot {' '.join(args)}" + (f"  <<< {stdin.strip()}" if stdin else ""))
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        try:
            out, err = self._proc.communicate(stdin, timeout=STEP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            out, err = self._proc.communicate()
            err += f"\n(conformance client: killed after {STEP_TIMEOUT_SECONDS:g} s)"
        code = self._proc.returncode
        self._proc = None
        sys.stdout.write(out)
        sys.stdout.flush()
        if err:
            sys.stderr.write(err if err.endswith("\n") else err + "\n")
        log(f"exit {code}" + ("" if must_succeed else " (best effort)"))
        if code and must_succeed and not self.first_failure:
            self.first_failure = code if code > 0 else 1
        return out

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()

    # --- the commands the scenarios use ---------------------------------------------------

    def list_tools(self, *flags: str, must_succeed: bool = True) -> list[dict[str, Any]]:
        """``codebot mcp list --json --schemas``: the server's tools (name, input_schema, ...)."""
        out = self.run("mcp", "list", "--json", "--schemas", *flags, must_succeed=must_succeed)
        try:
            views = json.loads(out)["servers"]
        except (ValueError, KeyError, TypeError):
            return []
        tools: list[dict[str, Any]] = []
        for view in views:
            if view.get("name") == SERVER:
                tools.extend(view.get("tools") or [])
        return tools

    def call(
        self, tool: str, arguments: dict[str, Any], *flags: str, must_succeed: bool = True
    ) -> str:
        return self.run(
            "mcp", "call", *flags, SERVER, tool, json.dumps(arguments), must_succeed=must_succeed
        )

    def batch(
        self, calls: list[tuple[str, dict[str, Any]]], *flags: str, must_succeed: bool = True
    ) -> list[dict[str, Any]]:
        lines = "".join(
            json.dumps({"server": SERVER, "tool": name, "arguments": args}) + "\n"
            for name, args in calls
        )
        out = self.run("mcp", "call", "--batch", *flags, stdin=lines, must_succeed=must_succeed)
        answers = []
        for line in out.splitlines():
            try:
                answers.append(json.loads(line))
            except ValueError:
                log(f"not a JSON answer line: {line!r}")
        return answers

    def elicit_flags(self, command: str = "call", answer: str = "defaults") -> list[str]:
        return ["--elicit", answer] if self.supports(command, "--elicit") else []

    def login_flags(self, command: str) -> list[str]:
        return ["--login"] if self.supports(command, "--login") else []


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: "***" if k in ("client_secret", "private_key") else _masked(v)
            for k, v in value.items()
        }
    return value


def json_values(text: str, key: str) -> list[str]:
    """Every string value under ``key``, anywhere in the JSON document ``text``."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k == key and isinstance(v, str):
                    found.append(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    try:
        walk(json.loads(text))
    except ValueError:
        pass
    return found


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


def stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """The least arguments that satisfy ``schema``'s required list."""
    props = schema.get("properties") or {}
    return {
        name: STUB_BY_TYPE.get((props.get(name) or {}).get("type"), "x")
        for name in schema.get("required") or []
    }


# --- scenarios -------------------------------------------------------------------------------

Scenario = Callable[[Codebot, dict[str, Any]], None]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


@scenario("initialize", "json-schema-ref-no-deref")
def run_list(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Connect, initialize, list the tools."""
    cb.run("mcp", "list")


@scenario("tools_call")
def run_add_numbers(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Call add_numbers(a=5, b=3) (codebot lists the tools first to find it)."""
    cb.call("add_numbers", {"a": 5, "b": 3})


@scenario("request-metadata")
def run_request_metadata(cb: Codebot, ctx: dict[str, Any]) -> None:
    """List with every client capability codebot can declare, then add_numbers if offered.

    The scenario checks the ``_meta`` envelope and headers of every request; its mock may list
    no tools, so the call (as in the SDK's client) is best effort.
    """
    tools = cb.list_tools(*cb.elicit_flags("list"))
    if any(t.get("original_name") == "add_numbers" for t in tools):
        cb.call("add_numbers", {"a": 5, "b": 3}, *cb.elicit_flags("call"), must_succeed=False)


@scenario("sse-retry")
def run_sse_retry(cb: Codebot, ctx: dict[str, Any]) -> None:
    """A call whose SSE stream the server closes early with ``retry:``; codebot must resume."""
    cb.call("test_reconnection", {})


@scenario("json-schema-2020-12-preservation")
def run_schema_echo(cb: Codebot, ctx: dict[str, Any]) -> None:
    """List the tools, then echo the focal tool's input schema back as codebot shows it."""
    tools = cb.list_tools()
    focal = next((t for t in tools if t.get("original_name") == "json_schema_2020_12_tool"), None)
    if focal is None:
        log("json_schema_2020_12_tool not listed")
        cb.first_failure = cb.first_failure or 1
        return
    cb.call("json_schema_echo", {"schema": focal.get("input_schema")})


@scenario("http-standard-headers")
def run_every_method(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Exercise every request kind codebot sends (Mcp-Method / Mcp-Name headers are checked).

    Every listed tool is called in one batch; resources and prompts are listed and read once
    codebot has the commands for them (issue 12).
    """
    tools = cb.list_tools()
    calls = [(t["original_name"], stub_arguments(t.get("input_schema") or {})) for t in tools]
    if calls:
        cb.batch(calls)
    if cb.has_command("resources"):
        uris = json_values(cb.run("mcp", "resources", SERVER, "--json"), "uri")
        if uris and cb.has_command("read"):
            cb.run("mcp", "read", SERVER, uris[0], must_succeed=False)
    if cb.has_command("prompts"):
        names = json_values(cb.run("mcp", "prompts", SERVER, "--json"), "name")
        names = [n for n in names if n != SERVER]
        if names and cb.has_command("prompt"):
            cb.run("mcp", "prompt", SERVER, names[-1], must_succeed=False)


@scenario("http-invalid-tool-headers")
def run_every_tool(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Call every tool codebot surfaces, with stub arguments (malformed ones must be dropped)."""
    tools = cb.list_tools()
    calls = [(t["original_name"], stub_arguments(t.get("input_schema") or {})) for t in tools]
    if calls:
        cb.batch(calls, must_succeed=False)


@scenario("http-custom-headers")
def run_tool_calls(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Replay the harness's ``toolCalls`` verbatim (null and edge values included), one batch."""
    calls = [(c["name"], c.get("arguments") or {}) for c in ctx.get("toolCalls") or []]
    cb.batch(calls, must_succeed=False)


@scenario("elicitation-sep1034-client-defaults")
def run_elicitation_defaults(cb: Codebot, ctx: dict[str, Any]) -> None:
    """A tool that elicits a form; ``--elicit defaults`` answers with the schema's defaults."""
    cb.call("test_client_elicitation_defaults", {}, *cb.elicit_flags())


@scenario("sep-2322-client-request-state")
def run_request_state(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Multi-round tool calls (SEP-2322), retried with ``requestState``, in one batch."""
    names = ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state"]
    names.append("test_mrtr_no_result_type")
    answers = cb.batch([(n, {}) for n in names], *cb.elicit_flags())
    for answer in answers:
        if "error" in answer:
            log(f"line {answer.get('line')} failed: {answer['error'].get('message')}")


@scenario("sep-2640-client-no-prefetch", "sep-2640-client-verify-digest")
@scenario("sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter")
def run_skills(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Skills extension (SEP-2640): list the server; resources and skills come with issue 12."""
    cb.run("mcp", "list")
    if cb.supports("resources", "--json"):
        cb.run("mcp", "resources", SERVER, "--json")


def oauth_settings(name: str, ctx: dict[str, Any]) -> dict[str, Any]:
    """The ``oauth`` object of the server entry for an ``auth/*`` scenario and its context."""
    if name in ("auth/client-credentials-jwt", "auth/client-credentials-basic"):
        oauth: dict[str, Any] = {"grant": "client_credentials", "client_id": ctx.get("client_id")}
        if ctx.get("private_key_pem"):
            oauth["private_key"] = ctx["private_key_pem"]
            oauth["signing_algorithm"] = ctx.get("signing_algorithm", "ES256")
        if ctx.get("client_secret"):
            oauth["client_secret"] = ctx["client_secret"]
        return oauth
    if ctx.get("client_id"):  # a pre-registered client
        oauth = {"client_id": ctx["client_id"]}
        if ctx.get("client_secret"):
            oauth["client_secret"] = ctx["client_secret"]
    else:  # a Client ID Metadata Document, or dynamic registration where the server has none
        oauth = {"client_metadata_url": CLIENT_METADATA_URL}
    if ctx.get("scopes"):
        oauth["scopes"] = ctx["scopes"]
    return oauth


def run_auth(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Log in inline while listing, then call the first tool (best effort, as the SDK does)."""
    tools = cb.list_tools(*cb.login_flags("list"))
    if tools:
        first = tools[0]
        cb.call(
            first["original_name"],
            {},
            *cb.login_flags("call"),
            *cb.elicit_flags(),
            must_succeed=False,
        )


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
