"""Fixtures for core tests: the fake model server and models on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from codebot_mcp.core.model.client import ChatModel, create_client
from codebot_mcp.core.model.config import ModelConfig
from tests.fakes.openai_server import FakeOpenAI


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
