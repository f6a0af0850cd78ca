"""``codebot mcp serve``'s ``bash`` hides secrets as chat's does (issue 29, item 4): a client
that cannot approve anything gets no key back from a confined call. In this process
(:func:`tests.mcpbridge.serve_inproc.serving`: the command's own ``compose`` and server, the
SDK's ``Client`` over JSON lines), with a home of fake credentials."""

from __future__ import annotations

import sys
from pathlib import Path

import mcp_types as types
import pytest

from codebot_mcp.core.security.sandbox import support
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
