"""The loopback redirect listener: 127.0.0.1 only, state checked, a page either way, bounded."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from codebot_mcp.mcpbridge.auth import LoginError, LoopbackListener
from codebot_mcp.mcpbridge.auth.loopback import REQUEST_READ_SECONDS


async def fetch(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient() as http:
        return await http.get(url)


@pytest.mark.anyio
async def test_wrong_state_is_refused_and_the_right_one_accepted() -> None:
    async with LoopbackListener(None, timeout=10) as listener:
        assert listener.redirect_uri.startswith("http://127.0.0.1:")
        listener.expected_state = "good-state"
        pages: list[httpx2.Response] = []

        async def browser() -> None:
            pages.append(await fetch(f"{listener.redirect_uri}?code=evil&state=forged"))
            pages.append(await fetch(f"{listener.redirect_uri}?code=c0de&state=good-state&iss=x"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(browser)
            result = await listener.wait()
        assert (result.code, result.state, result.iss) == ("c0de", "good-state", "x")
        assert pages[0].status_code == 400 and "state parameter does not match" in pages[0].text
        assert pages[1].status_code == 200 and "codebot is authorized" in pages[1].text


@pytest.mark.anyio
async def test_an_error_redirect_fails_with_its_reason() -> None:
    async with LoopbackListener(None, timeout=10) as listener:
        listener.expected_state = "s"
        url = f"{listener.redirect_uri}?error=access_denied&error_description=no%20way&state=s"
        async with anyio.create_task_group() as tg:
            tg.start_soon(fetch, url)
            with pytest.raises(LoginError, match="access_denied: no way"):
                await listener.wait()


@pytest.mark.anyio
async def test_the_wait_is_bounded() -> None:
    async with LoopbackListener(None, timeout=0.5) as listener:
        with pytest.raises(LoginError, match=r"no answer from the browser within 0\.5 s"):
            await listener.wait()


@pytest.mark.anyio
async def test_a_taken_port_is_a_clear_error() -> None:
    async with LoopbackListener(None) as first:
        with pytest.raises(LoginError, match=rf"cannot listen on 127\.0\.0\.1:{first.port}"):
            async with LoopbackListener(first.port):
                pass


@pytest.mark.anyio
async def test_a_silent_or_junk_connection_does_not_hold_up_the_real_redirect() -> None:
    """Connections are served at once, each on its own: a preconnect that says nothing, or a
    program trickling junk, cannot delay the browser's redirect."""
    async with LoopbackListener(None, timeout=30) as listener:
        listener.expected_state = "s"
        silent = [await anyio.connect_tcp("127.0.0.1", listener.port) for _ in range(3)]
        junk = await anyio.connect_tcp("127.0.0.1", listener.port)
        await junk.send(b"GE")  # and never the rest
        began = anyio.current_time()
        pages: list[httpx2.Response] = []

        async def browser() -> None:
            await anyio.sleep(0.1)  # after the silent ones are accepted
            pages.append(await fetch(f"{listener.redirect_uri}?code=c0de&state=s"))

        try:
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(browser)
                    result = await listener.wait()
        finally:
            for stream in (*silent, junk):
                await stream.aclose()
        took = anyio.current_time() - began
        assert result.code == "c0de"
        assert pages[0].status_code == 200
        # one at a time, it would wait for the first silent connection to be dropped (5 s)
        assert took < REQUEST_READ_SECONDS - 1, f"the redirect waited {took:.1f}s behind them"
