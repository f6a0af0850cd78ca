"""The keys a settings file may hold, and the warning for one codebot does not know."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOP_LEVEL_KEYS: tuple[str, ...] = (
    "mcp_servers",
    "mcpServers",
    "model",
    "base_url",
    "api_key_env",
    "max_turns",
    "tool_result_max_tokens",
    "max_tokens",
    "model_retries",
    "context_window",
    "tool_search",
    "usage_line_after",
    "roots",
    "warm_idle_timeout",
    "permissions",
    "checkpoints",
    "hooks",
    "subagent_depth",
    "registry_url",
    "sandbox",
    "$schema",
)
"""Every key a settings file may hold at the top level; others warn (typos hide settings)."""
PERMISSION_KEYS: tuple[str, ...] = ("allow", "ask", "deny")
SANDBOX_KEYS: tuple[str, ...] = ("mode", "network", "writable")
"""``sandbox`` (a project file may tighten it; widening it needs trust: ``core.config.trust``)."""
CHECKPOINT_KEYS: tuple[str, ...] = ("enabled", "max_files", "max_size_mb")
SECTION_KEYS: dict[str, tuple[str, ...]] = {
    "permissions": PERMISSION_KEYS,
    "sandbox": SANDBOX_KEYS,
    "checkpoints": CHECKPOINT_KEYS,
}
"""Objects whose own keys are checked too."""


@dataclass(frozen=True, slots=True)
class SettingWarning:
    """A top-level (or ``permissions``) key codebot does not know, kept as data."""

    file: Path
    key: str
    """As written, with its section: ``permisions``, ``permissions.dney`` or
    ``checkpoints.max_size``."""
    message: str

    def __str__(self) -> str:
        return self.message


def unknown_keys(path: Path, data: Mapping[str, Any]) -> list[SettingWarning]:
    """A warning for each top-level key, or key of a section (``permissions``,
    ``checkpoints``), codebot does not know."""
    import difflib

    def one(key: str, known: tuple[str, ...], where: str) -> SettingWarning:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        suggestion = f" (did you mean '{where}{close[0]}'?)" if close else ""
        message = f"unknown setting '{where}{key}' in {path} is ignored{suggestion}"
        return SettingWarning(path, where + key, message)

    out = [one(k, TOP_LEVEL_KEYS, "") for k in data if k not in TOP_LEVEL_KEYS]
    for name, known in SECTION_KEYS.items():
        section = data.get(name)
        if isinstance(section, dict):
            out += [
                one(str(k), known, f"{name}.")  # pyright: ignore[reportUnknownArgumentType]
                for k in section  # pyright: ignore[reportUnknownVariableType]
                if k not in known
            ]
    return out
