"""Codex CLI: ``~/.codex/config.toml`` (``$CODEX_HOME``), tables ``[mcp_servers.NAME]``.

Keys: ``command``/``args``/``env``/``cwd``/``env_vars`` (names passed through), ``url``
(Streamable HTTP), ``bearer_token_env_var``, ``http_headers``, ``env_http_headers``,
``startup_timeout_sec`` (or ``startup_timeout_ms``), ``tool_timeout_sec``, ``enabled``,
``enabled_tools``/``disabled_tools``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.importers import Imported, ImportFormatError, Source, common_entry

NAME = "codex"


def sources(cwd: Path, home: Path) -> list[Source]:
    """``$CODEX_HOME/config.toml`` (default ``~/.codex``), user-level."""
    codex_home = os.environ.get("CODEX_HOME")
    base = Path(codex_home).expanduser() if codex_home else home / ".codex"
    return [Source(NAME, base / "config.toml", "global")]


def _seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return int(value) if value == int(value) else float(value)
    return None


def read(source: Source) -> list[Imported]:  # noqa: C901 - one translation per Codex key
    """The servers of ``config.toml``."""
    import tomllib

    try:
        data = tomllib.loads(source.path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFormatError(f"cannot read {source.path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ImportFormatError(f"invalid TOML in {source.path}: {exc}") from None
    table = data.get("mcp_servers", {})
    if not isinstance(table, dict):
        raise ImportFormatError(f"'mcp_servers' in {source.path} is not a table")
    out: list[Imported] = []
    for name, raw in table.items():
        if not isinstance(raw, dict):
            out.append(Imported(str(name), {}, source, skipped="the entry is not a table"))
            continue
        item = Imported(str(name), {}, source)
        known = (
            "env_vars",
            "bearer_token_env_var",
            "http_headers",
            "env_http_headers",
            "startup_timeout_sec",
            "startup_timeout_ms",
            "tool_timeout_sec",
            "enabled_tools",
            "disabled_tools",
        )
        fixed: dict[str, Any] = {**raw}
        if "url" in fixed:
            fixed["type"] = "http"
        headers: dict[str, str] = dict(raw.get("http_headers") or {})
        for header, variable in dict(raw.get("env_http_headers") or {}).items():
            headers[str(header)] = f"${{{variable}}}"
        if isinstance(raw.get("bearer_token_env_var"), str):
            headers["Authorization"] = f"Bearer ${{{raw['bearer_token_env_var']}}}"
        if headers:
            fixed["headers"] = headers
        env = dict(raw.get("env") or {})
        for variable in raw.get("env_vars") or []:
            env.setdefault(str(variable), f"${{{variable}}}")
        fixed["env"] = env
        item.entry = common_entry(fixed, item.notes, known=known)
        startup = _seconds(raw.get("startup_timeout_sec"))
        if startup is None and _seconds(raw.get("startup_timeout_ms")) is not None:
            startup = _seconds(raw["startup_timeout_ms"] / 1000)
        if startup is not None:
            item.entry["timeout"] = startup
        if (tool := _seconds(raw.get("tool_timeout_sec"))) is not None:
            item.entry["tool_timeout"] = tool
        for theirs, ours in (
            ("enabled_tools", "include_tools"),
            ("disabled_tools", "exclude_tools"),
        ):
            if isinstance(raw.get(theirs), list):
                item.entry[ours] = [str(t) for t in raw[theirs]]
        out.append(item)
    return out
