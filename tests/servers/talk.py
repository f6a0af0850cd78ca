"""What the test-server tests share: a session on a server's stdio, its stderr, and a scripted
conversation with a raw server, message by message."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal, TextIO

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.servers.util import REPO_ROOT

DEMO_DIR = REPO_ROOT / "examples" / "demo"


def read_log(f: TextIO) -> str:
    f.flush()
    f.seek(0)
    return f.read()


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def leaf_errors(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside ``exc`` (the Client wraps failures in task groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaf_errors(inner)]
    return [exc]


@asynccontextmanager
async def stdio_session(
    params: StdioServerParameters,
    errlog: TextIO,
    mode: Literal["auto", "legacy", "2026-07-28"] = "auto",
    **kwargs: Any,
) -> AsyncIterator[Client]:
    async with Client(stdio_client(params, errlog=errlog), mode=mode, **kwargs) as client:
        yield client


@contextmanager
def env_set(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def conversation(
    module: str, script: list[dict[str, Any]], *args: str, stderr: TextIO | None = None
) -> list[Any]:
    """The answers of ``python -m tests.servers.<module> args`` to ``script``, one at a time."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", f"tests.servers.{module}", *args],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr or subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    try:
        for message in script:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                answers.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()
    return answers
