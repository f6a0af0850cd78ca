"""The real ``codebot`` CLI as the conformance client runs it: one throwaway home, bounded steps.

:class:`Codebot` writes the home's settings.json (one http server, ``conformance``), runs
``codebot --cwd HOME ...`` as a subprocess per step, echoes its output for the harness's log
and keeps the first failing exit code; the helpers wrap the ``mcp list`` / ``mcp call`` forms
the scenarios (:mod:`tests.conformance.scenarios`) use.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

SERVER = "conformance"
HERE = Path(__file__).resolve().parent
# Each codebot command is bounded well inside the harness's per-scenario timeout.
STEP_TIMEOUT_SECONDS = 75.0


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
        self.last_code = 0
        """The exit code of the last command :meth:`run` ran."""
        self.last_stderr = ""

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
        self.last_code, self.last_stderr = code, err
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
            k: "***"
            if k in ("client_secret", "private_key", "assertion", "id_token")
            else _masked(v)
            for k, v in value.items()
        }
    return value
