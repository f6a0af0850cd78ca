"""Shared fixtures: the anyio backend, isolation from the user's files and environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """The loopback OpenAI-compatible server; tests queue scripted turns on it."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reads ~/.codebot or leaks the developer's API keys and proxies."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CODEBOT_")) or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("CODEBOT_HOME", str(tmp_path / "home"))
    # Project settings written by tests are trusted; tests/test_trust.py unsets this.
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    yield
