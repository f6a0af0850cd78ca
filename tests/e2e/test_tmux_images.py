"""Issue 32 item 4 in a real terminal: a pasted image path and ``@./shot.png`` attach their
files (the REPL says so), a file named ``.png`` that is not an image is refused, and an MCP
server's screenshot reaches the model as an image, in a user message after the tool result."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

from tests.e2e.test_tmux import DEADLINE, Terminal, leave, model_server, requests
from tests.e2e.test_tmux import terminal as terminal
from tests.fakes import openai_turns as fo
from tests.fakes.pngs import png
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import server_entry, write_settings


def images_of(body: dict[str, Any]) -> list[bytes]:
    found: list[bytes] = []
    for message in body["messages"]:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                found.append(base64.b64decode(url.partition("base64,")[2]))
    return found


def test_images_in_a_terminal(terminal: Terminal, tmp_path: Path) -> None:
    turns = [
        fo.text("Two gradients."),
        fo.tool_calls(("mcp__pictures__screenshot", {"width": 30, "height": 20})),
        fo.text("A page."),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = tmp_path / "repo"
        write_settings(
            root, {"base_url": base_url, "mcp_servers": {"pictures": server_entry("pictures")}}
        )
        shots = root / "my shots"
        shots.mkdir()
        (shots / "screen shot.png").write_bytes(png(40, 30))
        (root / "shot.png").write_bytes(png(16, 12))
        (root / "notes.png").write_text("not an image\n")
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat", "--yes"], root, env)
        terminal.expect("/help for commands")
        # a file dropped on the terminal arrives as a bracketed paste of its quoted path
        terminal.tmux("set-buffer", f"what is in '{shots / 'screen shot.png'}' ")
        terminal.tmux("paste-buffer", "-p", "-t", "t")
        terminal.type_line("and @./shot.png?")
        screen = terminal.expect("Two gradients.")
        assert "attached screen shot.png (PNG, 40×30, " in screen, screen
        assert "attached shot.png (PNG, 16×12, " in screen, screen
        wait_until(lambda: len(requests(log)) >= 1, DEADLINE, "the request log")  # 0.1 s polls
        first = requests(log)[0]
        assert images_of(first) == [(shots / "screen shot.png").read_bytes(), png(16, 12)]
        wait_until(lambda: terminal.screen().rstrip().endswith("›"), DEADLINE, "the prompt")
        terminal.type_line("and @notes.png")
        terminal.expect("notes.png is not a PNG, JPEG, GIF or WebP image")
        time.sleep(0.5)  # the log is written every 0.1 s: a request sent would be there
        assert len(requests(log)) == 1  # not sent
        wait_until(lambda: terminal.screen().rstrip().endswith("›"), DEADLINE, "the prompt")
        terminal.type_line("take a screenshot")
        terminal.expect("A page.")
        wait_until(lambda: len(requests(log)) >= 3, DEADLINE, "the answer's request")
        after = requests(log)[2]["messages"]
        assert [m["role"] for m in after[-3:]] == ["assistant", "tool", "user"]
        assert "returned by call" in after[-1]["content"][1]["text"]
        shot = images_of({"messages": after[-1:]})
        assert len(shot) == 1 and shot[0][16:24] == (30).to_bytes(4, "big") + (20).to_bytes(
            4, "big"
        )
        leave(terminal, pid, [])
