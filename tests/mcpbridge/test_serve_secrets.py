"""``codebot mcp serve``'s ``bash`` hides secrets as chat's does (issue 29, item 4): a client
that cannot approve anything gets no key back from a confined call. In this process
(:func:`tests.mcpbridge.serve_inproc.serving`: the command's own ``compose`` and server, the
SDK's ``Client`` over JSON lines), with a home of fake credentials."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import mcp_types as types
import pytest

from codebot_mcp.core.sandbox.confinement import support
from tests.helpers import write_settings
from tests.mcpbridge.serve_inproc import serving

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or bool(support().missing(network=False)),
        reason="needs the sandbox (Linux: Landlock, user namespaces)",
    ),
]

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- serve-secret-0300"
DOTENV = "API_TOKEN=serve-secret-0301"


def text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_served_bash_cannot_read_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "userhome"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY + "\n")
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(DOTENV + "\n")
    write_settings(project, {"sandbox": {"deny_read": [".env"]}})
    async with serving(project, sandbox="workspace-write", yes=True) as client:
        for command, secret, path in (
            ("cat ~/.ssh/id_ed25519", KEY, home / ".ssh"),
            ("cat .env", DOTENV, project / ".env"),
        ):
            confined = await client.call_tool("bash", {"command": command})
            said = text(confined)
            assert secret not in said, said
            assert "sandbox" in said and str(path) in said, said
            assert '"sandbox": false' in said  # how to get it: a call that asks
            # --yes: the call outside the sandbox runs (a client that cannot approve is
            # refused instead, as test_serve.py shows): the control that the file is there
            outside = await client.call_tool("bash", {"command": command, "sandbox": False})
            assert secret in text(outside)


async def test_file_tools_ask_before_a_hidden_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read`` runs in codebot, not in the sandbox: a path the sandbox hides asks as one
    outside the project does, even inside it (the working directory is home here, with a
    ``deny_read`` file of the global settings); a client that cannot answer gets a refusal
    with the reason; ``grep`` of a directory around them leaves their lines out."""
    home = tmp_path / "userhome"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY + "\n")
    (home / ".env").write_text(DOTENV + "\n")
    (home / "notes.txt").write_text("plain notes\n")
    monkeypatch.setenv("HOME", str(home))
    global_file = Path(os.environ["CODEBOT_HOME"]) / "settings.json"  # home has no project
    global_file.parent.mkdir(parents=True, exist_ok=True)
    global_file.write_text(json.dumps({"sandbox": {"deny_read": ["~/.env"]}}))
    async with serving(home, sandbox="workspace-write") as client:
        plain = await client.call_tool("read", {"path": "notes.txt"})
        assert "plain notes" in text(plain) and not plain.is_error
        for path in (".ssh/id_ed25519", ".env", str(home / ".ssh" / "id_ed25519")):
            refused = await client.call_tool("read", {"path": path})
            said = text(refused)
            assert refused.is_error and KEY not in said and DOTENV not in said, said
            assert "hidden from the sandbox" in said, said
        searched = await client.call_tool("grep", {"pattern": "BEGIN", "path": ".ssh"})
        assert searched.is_error and KEY not in text(searched)
        swept = await client.call_tool("grep", {"pattern": "secret-03"})  # all of home
        assert KEY not in text(swept) and DOTENV not in text(swept), text(swept)
        assert "hidden from the sandbox" in text(swept)
        own = await client.call_tool("grep", {"pattern": "plain"})
        assert "notes.txt" in text(own)
