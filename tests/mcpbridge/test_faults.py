"""Servers that misbehave: crashes, garbage, floods, huge answers, storms, hangs on shutdown.

After each test the process table must hold no child of ours.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import anyio
import pytest

from codebot_mcp.mcpbridge.connection.manager import Manager
from codebot_mcp.mcpbridge.transport.process import STDERR_LOG_LIMIT
from codebot_mcp.mcpbridge.transport.stdio import MAX_MESSAGE_BYTES
from tests.helpers import children_of, make_server, tool_named

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _no_children_left() -> Iterator[None]:
    yield
    assert children_of(os.getpid()) == []


async def test_crash_during_a_call_is_an_error_result_and_the_next_call_restarts_once() -> None:
    servers = {"f": make_server("f", "faulty")}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            die = tool_named(manager, "mcp__f__die")
            echo = tool_named(manager, "mcp__f__echo")
            assert die is not None and echo is not None

            crashed = await die.execute({})
            assert crashed.is_error
            assert "closed the connection during the call" in crashed.text
            assert "The next call restarts it." in crashed.text
            with anyio.fail_after(5):
                await manager.clients["f"].done.wait()  # the lifecycle noticed the exit
            assert manager.clients["f"].crashed
            failure = manager.failures["f"]
            assert failure.stage == "call" and "exited while connected (exit code 7)" in (
                failure.message
            )
            assert [t.name for t in manager.tools()]  # its tools stay on offer for the restart

            again = await echo.execute({"text": "back"})  # restarts the server
            assert (again.text, again.is_error) == ("back", False)
            assert manager.clients["f"].connected

            await die.execute({})  # second crash: no more restarts
            with anyio.fail_after(5):
                await manager.clients["f"].done.wait()  # the lifecycle noticed the exit
            assert manager.clients["f"].crashed
            gone = await echo.execute({"text": "x"})
            assert gone.is_error and "not available" in gone.text
            # Dead for good: its tools leave the offer, and the session hears of it.
            assert manager.tools() == []
            assert await manager.refresh_if_dirty() == []


async def test_garbage_on_stdout_is_skipped() -> None:
    servers = {"g": make_server("g", "garbage_stdout", "--interleave")}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert manager.failures == {}
            echo = tool_named(manager, "mcp__g__echo")
            assert echo is not None
            for i in range(3):
                assert (await echo.execute({"text": f"t{i}"})).text == f"t{i}"


async def test_a_stderr_flood_is_capped_in_the_log_and_the_server_keeps_working() -> None:
    servers = {"flood": make_server("flood", "stderr_flood", "--megabytes", "20")}
    with anyio.fail_after(60):
        async with Manager(servers) as manager:
            await manager.start_all()
            echo = tool_named(manager, "mcp__flood__echo")
            assert echo is not None
            assert (await echo.execute({"text": "still here"})).text == "still here"
            await anyio.sleep(1)  # let the flood run
            log_file = manager.clients["flood"].log_file
        assert log_file is not None
        size = log_file.stat().st_size
        assert size <= STDERR_LOG_LIMIT + 200
        assert "more bytes of stderr dropped" in log_file.read_text(errors="replace")[-200:]


async def test_a_huge_answer_is_refused_with_bounded_memory_and_the_connection_survives() -> None:
    mb = MAX_MESSAGE_BYTES // 2**20 + 18  # 50 MB with the default limit
    servers = {"f": make_server("f", "faulty", timeout=60)}
    with anyio.fail_after(60):
        async with Manager(servers) as manager:
            await manager.start_all()
            huge = tool_named(manager, "mcp__f__huge")
            echo = tool_named(manager, "mcp__f__echo")
            assert huge is not None and echo is not None
            result = await huge.execute({"mb": mb})
            assert result.is_error
            assert f"larger than {MAX_MESSAGE_BYTES // 2**20} MB" in result.text
            assert (await echo.execute({"text": "ok"})).text == "ok"


async def test_an_answer_that_is_not_utf8_fails_that_call_at_once() -> None:
    # A tool timeout far beyond the test's bound: only the bad answer itself can end the call.
    servers = {"f": make_server("f", "faulty", tool_timeout=600)}
    with anyio.fail_after(20):
        async with Manager(servers) as manager:
            await manager.start_all()
            bad = tool_named(manager, "mcp__f__bad_bytes")
            echo = tool_named(manager, "mcp__f__echo")
            assert bad is not None and echo is not None
            result = await bad.execute({})
            assert result.is_error and "not valid JSON-RPC" in result.text
            assert "no answer within" not in result.text
            assert (await echo.execute({"text": "after"})).text == "after"


async def test_a_list_changed_storm_is_coalesced_into_one_refresh() -> None:
    servers = {"f": make_server("f", "faulty", protocol="legacy")}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            await manager.refresh_if_dirty()
            storm = tool_named(manager, "mcp__f__storm")
            count = tool_named(manager, "mcp__f__list_count")
            assert storm is not None and count is not None
            before = int((await count.execute({})).text)
            await storm.execute({"count": 500})
            await anyio.sleep(0.5)  # the notifications arrive
            assert await manager.refresh_if_dirty() is not None
            assert await manager.refresh_if_dirty() is None
            after = int((await count.execute({})).text)
            assert after - before == 1


async def test_a_server_that_hangs_on_shutdown_is_killed_after_the_grace_period() -> None:
    servers = {"stuck": make_server("stuck", "faulty", "--ignore-term")}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert manager.failures == {}
            server = manager.clients["stuck"]._process
            assert server is not None
    # stdin closed and SIGTERM ignored: only SIGKILL ends it (and no child is left, below).
    assert server.process.returncode == -signal.SIGKILL
