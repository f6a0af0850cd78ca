"""`--resume ID` and `--continue` say there is no such session before anything starts: no
server is launched (a launch leaves its log in ``<state>/log/<server>/``), no model asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--resume", "nosuch"], "no saved sessions"),
        (["--continue"], "no saved sessions"),
    ],
)
def test_no_session_no_server(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    said: str,
) -> None:
    write_settings(
        tmp_path, {"base_url": fake.base_url, "mcp_servers": {"s": server_entry("echo")}}
    )
    code = run(["--cwd", str(tmp_path), "chat", "-p", "hi", *flags])
    err = capsys.readouterr().err
    assert code == 2 and said in err, err
    assert not (tmp_path / "home" / "state" / "log" / "s").exists()  # never launched
    assert fake.requests == [] and fake.gets == []


def test_an_unknown_id_among_saved_sessions_launches_nothing(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url})
    fake.queue(fo.text("first"))
    assert run(["--cwd", str(tmp_path), "chat", "-p", "hi"]) == 0  # one session saved
    write_settings(
        tmp_path, {"base_url": fake.base_url, "mcp_servers": {"s": server_entry("echo")}}
    )
    capsys.readouterr()
    code = run(["--cwd", str(tmp_path), "chat", "-p", "again", "--resume", "nosuch"])
    err = capsys.readouterr().err
    assert code == 2 and "'nosuch' is not a saved session" in err, err
    assert not (tmp_path / "home" / "state" / "log" / "s").exists()
