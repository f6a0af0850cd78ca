"""`mcp add --url`, `add-json` and `import` accept the URLs settings accept, `${VAR:-https://…}`
included, and an error quotes the URL as the user wrote it (never an expansion of it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run

WRITTEN = "${MCP_BASE:-https://mcp.example.com}/mcp"


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def saved(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "home" / "settings.json").read_text())
    return data["mcp_servers"]


@pytest.mark.parametrize(
    "url",
    [WRITTEN, "https://${MCP_HOST}/mcp", "${MCP_URL}", "${MCP_URL:-http://127.0.0.1:9/mcp}"],
)
def test_add_and_add_json_take_what_settings_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    cwd = ("--cwd", str(tmp_path))
    code, out, err = codebot(capsys, *cwd, "mcp", "add", "a", "--url", url)
    assert code == 0, err
    entry = json.dumps({"type": "http", "url": url})
    code, out, err = codebot(capsys, *cwd, "mcp", "add-json", "b", entry)
    assert code == 0, err
    assert saved(tmp_path)["a"]["url"] == saved(tmp_path)["b"]["url"] == url
    code, out, err = codebot(capsys, *cwd, "mcp", "get", "a")
    assert code == 0 and url in out


@pytest.mark.parametrize(
    "url", ["${MCP_BASE:-ftp://mcp.example.com}/mcp", "ftp://host/${TOKEN}", "mcp.example.com"]
)
def test_a_bad_url_is_quoted_as_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    url: str,
) -> None:
    monkeypatch.setenv("TOKEN", "tok-secret-value-123")
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "add", "a", "--url", url)
    assert code == 2
    assert f"found {json.dumps(url)}" in err, err
    assert "tok-secret-value-123" not in err and "placeholder" not in err


def test_import_takes_a_url_with_a_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    servers = {"remote": {"type": "http", "url": WRITTEN}}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    code, _, err = codebot(
        capsys, "--cwd", str(repo), "mcp", "import", "--from", "claude-code", "--scope", "global"
    )
    assert code == 0, err
    assert saved(tmp_path)["remote"] == {"type": "http", "url": WRITTEN}
