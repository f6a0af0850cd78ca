"""Shared fixtures: the anyio backend, isolation from the user's files and environment."""

from __future__ import annotations

import gc
import os
import signal
import socketserver
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from xdist.scheduler import LoadScopeScheduling

from tests.fakes.openai_server import FakeOpenAI

SERVER_ERRORS: list[BaseException] = []
"""Exceptions of request handlers in the test servers that run in a test's own process."""


def _keep_handler_error(self: socketserver.BaseServer, request: Any, address: Any) -> None:
    """socketserver prints a handler's exception (a client that hung up mid-answer: a
    cancelled turn, a test that ended first) to the process's stderr, where whichever test
    runs next in this worker captures it as its own; they are kept here instead."""
    error = sys.exc_info()[1]
    if error is not None:
        SERVER_ERRORS.append(error)


socketserver.BaseServer.handle_error = _keep_handler_error  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the processes the tests start as it reaches them from a terminal.

    A run started in the background of a script (``make test &``, a CI runner without job
    control) inherits SIGINT and SIGQUIT *ignored* (POSIX, for an asynchronous list), and an
    ignored signal stays ignored across ``exec``: every codebot a test starts would then
    ignore the Ctrl-C the interrupt tests send, as a ``nohup``'d program rightly does, and
    wait out its 600 s handshake. A handled signal is reset to the default in an exec'd
    child, so handling SIGINT here (in the controller and in each xdist worker) gives the
    children a terminal's default again."""
    del config
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collect with the cyclic collector paused, then freeze what collecting made: each worker
    imports every test module (and through them the SDKs), and the collector would walk that
    growing heap again and again (``core.gcpause`` does the same for codebot's own start)."""
    del session
    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.enable()


# -- scheduling under xdist ---------------------------------------------------------------

SLOW_FIRST = (
    "tests/hostile/test_doctor_scale.py",
    "tests/cli/test_stream_json.py",
    "tests/cli/test_acp.py",
    "tests/e2e/test_warm.py",
    "tests/test_secrets.py",
    "tests/cli/test_registry_lifecycle.py",
    "tests/cli/test_chat_repl.py",
    "tests/core/test_tool_record_types.py",
    "tests/hostile/test_answer_caps.py",
    "tests/hostile/test_http_size_cap.py",
    "tests/hostile/test_http_proxy.py",
    "tests/hostile/test_setsid.py",
    "tests/e2e/test_tmux_day.py",
)
"""The files that hold the longest tests (``make test``'s 25 slowest, 24 to 52 s each under
load), longest first: run first, so that no worker is still in one when the others are done.
In collection order some came last (``test_secrets`` at 2021 of 2161, ``test_doctor_scale`` at
1471)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`SLOW_FIRST` first, in its order; the rest keeps its order (every
    worker sorts the same collection the same way, as xdist requires)."""
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


class _Scheduling(LoadScopeScheduling):
    """xdist's ``load`` distribution, one test at a time, except that each test class is one
    unit of work: a class holds the tests that share a costly process and only read it
    (``TestOneHolder`` in ``tests/e2e/test_warm.py``, ``TestOneTracedRun`` in
    ``tests/test_telemetry.py``), which then starts once, in the worker that gets them all,
    not once per worker that gets one of them (``test_telemetry``'s run: four times in a
    measured ``make test``). xdist's own ``loadgroup`` cannot do it here: it renames the
    items through ``Item._nodeid``, which pytest 9 no longer reads. The classes are handed
    out first (largest first), then the other tests in collection order."""

    def _split_scope(self, nodeid: str) -> str:
        module, *rest = nodeid.split("::")
        return f"{module}::{rest[0]}" if len(rest) > 1 else nodeid


@pytest.hookimpl(optionalhook=True)  # a run with ``-p no:xdist`` has no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """:class:`_Scheduling` for ``-n N`` without another ``--dist``."""
    if config.getvalue("dist") != "load":
        return None
    return _Scheduling(config, log)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """The loopback OpenAI-compatible server; tests queue scripted turns on it."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    """A test server's stderr, in a file the test can read back (``tests.servers.talk``)."""
    with open(tmp_path / "server-stderr.log", "w+", encoding="utf-8", errors="replace") as f:
        yield f


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reads ~/.codebot or leaks the developer's API keys and proxies."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CODEBOT_")) or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("CODEBOT_HOME", str(tmp_path / "home"))
    # Nor the developer's ~/.claude (settings, agents, CLAUDE.md: core.config.claudefiles).
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    # No machine's /etc/codebot/managed-settings.json reaches a test (tests/cli/test_managed.py).
    monkeypatch.setenv("CODEBOT_MANAGED_SETTINGS", str(tmp_path / "no-managed-settings.json"))
    # Project settings written by tests are trusted; tests/test_trust.py unsets this.
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    yield


@pytest.fixture(autouse=True)
def _fresh_process_state() -> Iterator[None]:
    """Process-wide state is put back after each test, so no test leans on an earlier one in
    the same worker: the secrets the redactor learnt, the warnings said once, the reaper's and
    the descendant sweep's switches and lists."""
    from codebot_mcp.cli import render
    from codebot_mcp.core.proc import descendants
    from codebot_mcp.core.secrets import redact
    from codebot_mcp.mcpbridge.transport import reaper

    secrets = set(redact.SECRETS._secrets)
    yield
    redact.SECRETS._secrets.clear()
    redact.SECRETS._secrets.update(secrets)
    render.reset_warnings()
    reaper._armed = reaper._allowed = False
    descendants._armed = False
    descendants._roots.clear()
    descendants._spared.clear()
