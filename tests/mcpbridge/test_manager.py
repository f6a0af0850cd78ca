"""The Manager against real MCP servers: our SDK-built test servers as real subprocesses."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from codebot_mcp.core.tools.base import Capability
from codebot_mcp.mcpbridge.connection.manager import Manager
from tests.helpers import children_of, make_server, server_config, tool_named

pytestmark = pytest.mark.anyio


async def test_echo_server_tools_calls_and_content() -> None:
    servers = {"echo": make_server("echo", "echo")}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert manager.failures == {}
            tools = {t.original_name: t for t in manager.tools()}
            assert tools["echo"].name == "mcp__echo__echo"
            assert [t.name for t in manager.tools()] == sorted(t.name for t in manager.tools())

            result = await tools["echo"].execute({"text": "hello"})
            assert (result.text, result.is_error) == ("hello", False)

            failed = await tools["fail"].execute({"message": "kaboom"})
            assert failed.is_error and "kaboom" in failed.text

            image = await tools["image"].execute({})
            assert "[image: image/png," in image.text

            link = await tools["link"].execute({})
            assert "[resource link: file:///tmp/example.txt" in link.text

            embedded = await tools["embedded"].execute({})
            assert embedded.text == "embedded hello"

            binary = await tools["binary"].execute({})
            assert "[embedded resource:" in binary.text and "256 bytes" in binary.text

            added = await tools["add"].execute({"a": 2, "b": 3})
            assert added.data["structuredContent"] == {"sum": 5}

            assert tools["read_notes"].info.permission.capability is Capability.READ
            assert tools["delete_note"].info.permission.capability is Capability.WRITE
            assert tools["fetch_url"].info.permission.capability is Capability.NETWORK
            assert tools["mystery"].info.permission.capability is Capability.UNKNOWN

            assert manager.instructions().startswith("## echo\n")
            schema = tools["mystery"].schema()
            assert schema["type"] == "object" and "properties" in schema


async def test_child_environment_is_minimal_plus_configured_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret")
    monkeypatch.setenv("CODEBOT_PARENT_ONLY", "parent")
    servers = {"echo": make_server("echo", "echo", env={"GIVEN": "configured"})}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            env = tool_named(manager, "mcp__echo__env")
            assert env is not None
            assert (await env.execute({"name": "GIVEN"})).text == "configured"
            assert (await env.execute({"name": "OPENAI_API_KEY"})).text == "<unset>"
            assert (await env.execute({"name": "CODEBOT_PARENT_ONLY"})).text == "<unset>"


async def test_parallel_start_overlaps(tmp_path: Path) -> None:
    # Each server waits, before it answers anything, until all five have been launched: the
    # handshakes can only complete if the manager starts them all without waiting for any.
    barrier = ["--delay", "0", "--barrier", str(tmp_path / "barrier"), "--count", "5"]
    servers = {
        f"slow{i}": make_server(f"slow{i}", "slow_start", *barrier, timeout=50) for i in range(5)
    }
    with anyio.fail_after(60):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert manager.failures == {}
            assert len(manager.tools()) == 5


async def test_partial_failure_is_recorded_with_stage_and_stderr() -> None:
    servers = {
        "echo": make_server("echo", "echo"),
        "crash": make_server("crash", "crash_on_start"),
        "missing": server_config("missing", {"command": "no-such-command-xyz"}),
        "broken": server_config("broken", {"url": "ftp://nope"}),
    }
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            failures = manager.failures
            assert set(failures) == {"crash", "missing", "broken"}
            assert failures["crash"].stage == "handshake"
            assert "database connection refused" in failures["crash"].stderr_tail
            assert failures["missing"].stage == "launch"
            assert "no-such-command-xyz" in failures["missing"].message
            assert failures["broken"].stage == "config"
            assert [t.server for t in manager.tools()] == ["echo"] * len(manager.tools())
            statuses = {s.name: s.status for s in manager.status()}
            assert statuses == {
                "echo": "connected",
                "crash": "failed",
                "missing": "failed",
                "broken": "failed",
            }


async def test_handshake_timeout_is_bounded() -> None:
    servers = {"hang": make_server("hang", "hang", timeout=1)}
    with anyio.fail_after(15):
        async with Manager(servers) as manager:
            await manager.start_all()
            failure = manager.failures["hang"]
            # The client's own 1 s deadline ended it (not the test's bound, not a crash).
            assert failure.timed_out and failure.stage == "handshake"
            assert "no answer within 1 s" in failure.message


async def test_a_server_that_ignores_discover_does_not_cost_the_probe_timeout() -> None:
    # The SDK waits 10 s for an unanswered server/discover; our guard answers it as soon
    # as the server shows it is alive, so auto mode connects about as fast as legacy.
    # A handshake deadline below the SDK's 10 s probe wait: unguarded, this start times out.
    servers = {"silent": make_server("silent", "silent_discover", timeout=8)}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert manager.failures == {}
            client = manager.clients["silent"]
            assert client.info is not None and client.info.protocol_version == "2025-11-25"
            [tool] = manager.tools()
            assert (await tool.execute({})).text == "hello from silent"


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_list_changed_marks_dirty_and_refresh_shows_the_new_tool(protocol: str) -> None:
    servers = {"mut": make_server("mut", "mutating", protocol=protocol)}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            client = manager.clients["mut"]
            expected_era = "2026-07-28" if protocol == "auto" else "2025-11-25"
            assert client.info is not None and client.info.protocol_version == expected_era
            first = await manager.refresh_if_dirty()  # the start itself marks the set dirty
            assert first is not None
            assert await manager.refresh_if_dirty() is None  # clean: nothing, no I/O
            add = tool_named(manager, "mcp__mut__add_tool")
            assert add is not None
            assert not (await add.execute({"name": "brand_new"})).is_error
            refreshed = None
            with anyio.fail_after(10):
                while refreshed is None:
                    await anyio.sleep(0.02)
                    refreshed = await manager.refresh_if_dirty()
            assert "mcp__mut__brand_new" in [t.name for t in refreshed]


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_a_failed_relist_is_shown_stale_and_retried_at_the_next_refresh(
    protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """list_changed, then the re-list fails once: the last good listing stays, status() and
    /mcp say why, and the next refresh lists again (no new notification needed)."""
    from types import SimpleNamespace

    from codebot_mcp.cli.repl.status import show_mcp
    from codebot_mcp.mcpbridge.connection.report import listed_view, managed_listing

    servers = {"rl": make_server("rl", "relist_fail", protocol=protocol)}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert await manager.refresh_if_dirty() is not None  # the start marks it dirty
            change = tool_named(manager, "mcp__rl__change")
            assert change is not None
            assert not (await change.execute({"fails": 1})).is_error
            refreshed = None
            while refreshed is None:  # until the notification came and the re-list ran
                await anyio.sleep(0.02)
                refreshed = await manager.refresh_if_dirty()
            assert "mcp__rl__added_1" not in [t.name for t in refreshed]  # the old listing
            [status] = manager.status()
            assert status.status == "connected" and status.tool_count == 2
            assert status.stale is not None
            assert "re-listing its tools after tools/list_changed failed" in status.stale
            assert "the tool registry is reloading" in status.stale
            [listed] = managed_listing(manager)
            assert listed_view(listed)["stale"] == {"message": status.stale}
            await show_mcp(
                SimpleNamespace(  # type: ignore[arg-type]
                    manager=manager,
                    untrusted=[],
                    settings=SimpleNamespace(policy_removed={}),
                )
            )
            shown = capsys.readouterr().out
            assert "rl: connected, 2 tools, stale (its tool list is out of date)" in shown
            assert "the tool registry is reloading" in shown

            retried = await manager.refresh_if_dirty()  # no new notification: a retry
            assert retried is not None
            assert "mcp__rl__added_1" in [t.name for t in retried]
            [status] = manager.status()
            assert status.stale is None and status.tool_count == 3
            assert listed_view(managed_listing(manager)[0])["stale"] is None
            assert await manager.refresh_if_dirty() is None  # clean again: no I/O


async def test_clean_refresh_does_no_io() -> None:
    servers = {"echo": make_server("echo", "echo")}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            await manager.refresh_if_dirty()
            client = manager.clients["echo"]
            # Kill the connection's ability to talk: a refresh that did I/O would now fail
            # or hang; a clean one returns None at once.
            client._session = None
            for _ in range(1000):
                assert await manager.refresh_if_dirty() is None


async def test_include_exclude_and_disabled() -> None:
    servers = {
        "inc": make_server("inc", "echo", include_tools=["e*", "add"], exclude_tools=["embedded"]),
        "off": make_server("off", "echo", enabled=False),
    }
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert sorted(t.original_name for t in manager.tools()) == ["add", "echo", "env"]
            assert "off" not in manager.clients
            statuses = {s.name: s.status for s in manager.status()}
            assert statuses == {"inc": "connected", "off": "disabled"}


async def test_reconfigure_starts_new_and_stops_removed_servers() -> None:
    first = {"a": make_server("a", "silent_discover")}
    with anyio.fail_after(30):
        async with Manager(first) as manager:
            await manager.start_all()
            old_client = manager.clients["a"]
            await manager.reconfigure({"b": make_server("b", "silent_discover")})
            assert old_client.state == "stopped"
            assert list(manager.clients) == ["b"]
            assert [t.name for t in manager.tools()] == ["mcp__b__hello"]


async def test_reconfigure_retries_failed_servers_and_keeps_healthy_ones() -> None:
    servers = {
        "ok": make_server("ok", "silent_discover"),
        "crash": make_server("crash", "crash_on_start"),
    }
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            healthy, failed = manager.clients["ok"], manager.clients["crash"]
            assert failed.failure is not None
            await manager.reconfigure(servers)
            assert manager.clients["ok"] is healthy  # unchanged and connected: kept
            assert manager.clients["crash"] is not failed  # tried again
            assert manager.failures["crash"].stage == "handshake"


async def test_no_child_process_is_left_after_close() -> None:
    servers = {
        "echo": make_server("echo", "echo"),
        "silent": make_server("silent", "silent_discover"),
        "hang": make_server("hang", "hang", "--ignore-eof", timeout=1),
    }
    with anyio.fail_after(40):
        async with Manager(servers) as manager:
            await manager.start_all()
            assert children_of(os.getpid())
    assert children_of(os.getpid()) == []


async def test_two_tasks_share_one_manager() -> None:
    servers = {"echo": make_server("echo", "echo")}
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            tool = tool_named(manager, "mcp__echo__echo")
            assert tool is not None
            results: list[str] = []

            async def worker(i: int) -> None:
                results.append((await tool.execute({"text": f"t{i}"})).text)

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(worker, i)
            assert sorted(results) == sorted(f"t{i}" for i in range(10))


async def test_instructions_about_hidden_tools_are_left_out() -> None:
    servers = {
        "shown": make_server("shown", "echo"),
        "hidden": make_server("hidden", "echo", include_tools=["add"]),
    }
    with anyio.fail_after(30):
        async with Manager(servers) as manager:
            await manager.start_all()
            text = manager.instructions()
    shown, hidden = text.split("## shown")[1], text.split("## hidden")[1].split("## shown")[0]
    assert "Use echo to repeat text." in shown
    assert "Use echo" not in hidden and "1 line(s) about tools not enabled here" in hidden


@pytest.mark.parametrize("abrupt", [False, True], ids=["closed", "lost"])
async def test_the_listen_stream_is_reopened_after_it_drops(abrupt: bool) -> None:
    """2026-07-28: changes come only on the listen stream. When the server ends it (a graceful
    close, or an error), it is opened again, what may have been missed meanwhile is marked
    stale, and the next change is heard."""
    servers = {"mut": make_server("mut", "mutating")}

    async def refreshed(manager: Manager) -> list[str]:
        with anyio.fail_after(10):
            while (tools := await manager.refresh_if_dirty()) is None:  # noqa: ASYNC110
                await anyio.sleep(0.02)
        return [t.name for t in tools]

    async def call(manager: Manager, tool: str, **arguments: object) -> str:
        found = tool_named(manager, f"mcp__mut__{tool}")
        assert found is not None
        result = await found.execute(arguments)
        assert not result.is_error, result.text
        return result.text

    async def listening(manager: Manager) -> None:
        with anyio.fail_after(10):
            while await call(manager, "listeners") != "1":  # noqa: ASYNC110 - its state
                await anyio.sleep(0.05)

    with anyio.fail_after(60):
        async with Manager(servers) as manager:
            await manager.start_all()
            client = manager.clients["mut"]
            assert client.info is not None and client.info.protocol_version == "2026-07-28"
            await refreshed(manager)  # the start marks the set dirty
            await listening(manager)
            for round_ in range(2):  # dropped twice: reopened each time
                assert await call(manager, "drop_listen", abrupt=abrupt) == "dropped 1"
                await listening(manager)  # reopened
                await refreshed(manager)  # what changed meanwhile is listed again
                await call(manager, "add_tool", name=f"after_drop_{round_}")
                assert f"mcp__mut__after_drop_{round_}" in await refreshed(manager)
