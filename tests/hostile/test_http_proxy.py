"""Proxies from the environment are honoured for HTTP servers, and every HTTP bound holds
through them: the 32 MB cap (also on decoded bytes: a gzip bomb), NO_PROXY, timeouts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.mcpbridge.transport.stdio import MAX_MESSAGE_BYTES
from tests.helpers import run_measured, write_settings
from tests.servers.util import run_http_server


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Our forward proxy on 127.0.0.1; yields its URL and the log of what it forwarded."""
    log = tmp_path / "proxy.log"
    log.touch()
    with run_http_server("--log", str(log), module="proxy") as url:
        yield url, log


@pytest.fixture(scope="module")
def web_url() -> Iterator[str]:
    """The Streamable HTTP test server, shared by the module's tests (it keeps no state that
    one call could leave for the next: each ``mcp call`` is a session of its own)."""
    with run_http_server("--token", "t0ken-abc") as url:
        yield url


@pytest.fixture
def web(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, web_url: str) -> Path:
    """A project with the Streamable HTTP test server as ``web``; no NO_PROXY."""
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    entry = {"url": web_url, "headers": {"Authorization": "Bearer t0ken-abc"}, "timeout": 30}
    write_settings(tmp_path, {"mcp_servers": {"web": entry}})
    return tmp_path


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_in_the_environment_carries_the_requests(
    web: Path,
    proxy: tuple[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    url, log = proxy
    monkeypatch.setenv(variable, url)
    assert run(["--cwd", str(web), "mcp", "call", "web", "echo", "text=via the proxy"]) == 0
    assert capsys.readouterr().out == "via the proxy\n"
    forwarded = log.read_text().splitlines()
    assert any(line.startswith("POST http://127.0.0.1:") for line in forwarded), forwarded


def test_no_proxy_is_honoured(
    web: Path,
    proxy: tuple[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, log = proxy
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert run(["--cwd", str(web), "mcp", "call", "web", "echo", "text=direct"]) == 0
    assert capsys.readouterr().out == "direct\n"
    assert log.read_text() == ""


@pytest.fixture(scope="module")
def baseline_peak(tmp_path_factory: pytest.TempPathFactory, web_url: str) -> int:
    """The peak RSS of a plain ``mcp call`` of a small answer over HTTP (the SDK path)."""
    home = tmp_path_factory.mktemp("baseline")
    entry = {"url": web_url, "headers": {"Authorization": "Bearer t0ken-abc"}, "timeout": 30}
    write_settings(home, {"mcp_servers": {"web": entry}})
    argv = ["--cwd", str(home), "mcp", "call", "web", "echo", "text=small"]
    code, output, peak = run_measured(argv, CODEBOT_TRUST_PROJECT="1")
    assert code == 0, output
    return peak


class TestAgainstOneBaseline:
    """The size caps, each against the one peak of :func:`baseline_peak`: under xdist a test
    class is one unit of work (``tests/conftest.py``), so that run is made once."""

    def test_the_size_cap_holds_through_a_proxy(
        self, web: Path, proxy: tuple[str, Path], baseline_peak: int
    ) -> None:
        url, log = proxy
        size = MAX_MESSAGE_BYTES + 8 * 2**20
        argv = ["--cwd", str(web), "mcp", "call", "web", "huge", f"size={size}"]
        code, output, peak = run_measured(argv, HTTP_PROXY=url)
        assert code in (1, 4), output
        assert "larger than 32 MB" in output
        grown = peak - baseline_peak
        assert grown < 3 * MAX_MESSAGE_BYTES, f"grew by {grown / 2**20:.0f} MB"
        assert "POST http://127.0.0.1:" in log.read_text()

    @pytest.mark.parametrize("through_proxy", [False, True])
    def test_a_gzip_bomb_is_dropped_at_32_mb_of_decoded_bytes(
        self,
        tmp_path: Path,
        proxy: tuple[str, Path],
        monkeypatch: pytest.MonkeyPatch,
        through_proxy: bool,
        baseline_peak: int,
    ) -> None:
        """200 MB of JSON sent as a 0.2 MB gzip body: counted as what it inflates to."""
        env = {"CODEBOT_TRUST_PROJECT": "1"}
        if through_proxy:
            monkeypatch.delenv("NO_PROXY", raising=False)
            env["HTTP_PROXY"] = proxy[0]
        with run_http_server(module="gzip_bomb") as url:
            write_settings(tmp_path, {"mcp_servers": {"bomb": {"url": url, "timeout": 30}}})
            code, output, peak = run_measured(
                ["--cwd", str(tmp_path), "mcp", "list", "--json"], **env
            )
        assert code == 4, output
        assert "larger than 32 MB" in output
        grown = peak - baseline_peak
        assert grown < 3 * MAX_MESSAGE_BYTES, f"grew by {grown / 2**20:.0f} MB"
        assert ("POST http://127.0.0.1:" in proxy[1].read_text()) is through_proxy
