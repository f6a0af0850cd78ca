"""Class 10: the approval prompt never hides part of what will run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.chat import ChatOptions
from codebot_mcp.cli.repl import Repl
from codebot_mcp.cli.runtime import Globals
from tests.fakes import openai_server as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


@pytest.mark.anyio
async def test_a_padded_command_is_shown_whole(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    write_settings(tmp_path, {"base_url": fake.base_url})
    command = "echo hello" + " " * 400 + "; touch PWNED"
    fake.queue(fo.tool_calls(("bash", {"command": command})), fo.text("ok"))
    with create_pipe_input() as inp:
        repl = Repl(inp, DummyOutput())

        async def typist() -> None:
            for key in ("go\r", "n\r", "\x04"):
                await anyio.sleep(0.6)
                inp.send_text(key)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(typist)
                code: Any = await repl.main(Globals(cwd=tmp_path), ChatOptions())
    err = capsys.readouterr().err
    assert code == 0
    assert f"command ({len(command) + 2} characters):" in err
    shown = "".join(line.strip() for line in err.splitlines() if line.startswith("      "))
    assert shown.replace(" ", "") == f'"{command}"'.replace(" ", "")
    assert "; touch PWNED" in err
    assert not (tmp_path / "PWNED").exists()
