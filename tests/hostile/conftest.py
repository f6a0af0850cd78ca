"""Attack reproductions: a hostile repository, server or model, against the real parts."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust is what these tests are about: nothing is trusted unless a test says so."""
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT", raising=False)
