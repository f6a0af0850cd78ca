"""Fixtures for core tests: the anyio backend, an isolated environment, the fake model server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.model import ChatModel, ModelConfig, create_client
from tests.fakes.openai_server import FakeOpenAI

_CLEARED = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "CODEBOT_MODEL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("CODEBOT_HOME", str(tmp_path / "home"))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llama() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(llama=True) as server:
        yield server


def make_model(server: FakeOpenAI, **extra: Any) -> ChatModel:
    """A ChatModel on the real openai client pointed at the fake, without retries."""
    config = ModelConfig("fake-model", server.base_url, "sk-test-key-123456", "OPENAI_API_KEY")
    client = create_client(config, max_retries=0, _strict_response_validation=True, **extra)
    return ChatModel(client, config)


@pytest.fixture
async def model(fake: FakeOpenAI) -> AsyncIterator[ChatModel]:
    chat = make_model(fake)
    yield chat
    await chat.aclose()


@pytest.fixture
async def llama_model(llama: FakeOpenAI) -> AsyncIterator[ChatModel]:
    chat = make_model(llama)
    yield chat
    await chat.aclose()
