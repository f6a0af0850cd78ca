"""What the trust review shows of a project's servers: every command, URL and expanded
variable, escaped, so a cloned repository cannot hide what it would run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.secrets.redact import redact_url

if TYPE_CHECKING:
    from pathlib import Path

    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.trust import TrustCheck


def describe(config: ServerConfig, api_key_env: str | None = None) -> list[str]:
    """What a server runs or where it connects, then one line per fact that decides what
    runs: the resolved program, its ``cwd``, a ``PATH`` override, and every variable it
    expands anywhere (``core.envexpand.EXPANDED_STRINGS``: args, env, headers, url, oauth...;
    credentials and the model's API key flagged). Env, header and oauth values are not shown,
    only their names.
    """
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.proc.lookup import find_command

    if config.type == "http":
        text = f"{config.name}: {redact_url(config.url or '')}"
        if config.headers:
            text += f" (headers: {', '.join(config.headers)})"
        oauth = config.raw.get("oauth")
        if isinstance(oauth, dict) and oauth:
            text += f" (oauth: {', '.join(str(k) for k in oauth)})"
    else:
        command = " ".join([config.command or "?", *(redact_url(a) for a in config.args)])
        text = f"{config.name}: {command}"
        if config.env:
            text += f" (env: {', '.join(config.env)})"
    if config.error:
        text += "  [invalid entry: will not start]"
    lines = [text]
    if config.type == "stdio" and config.error is None and config.command:
        found = find_command(config.command, config.cwd, config.env)
        lines.append(f"    runs: {found if found else '(not found)'}")
        lines.append(f"    cwd: {config.cwd}")
        if "PATH" in config.env:
            lines.append(f"    PATH override: {config.env['PATH']}")
    for item in trust.expansions(config, api_key_env):
        line = f"    expands ${{{item.variable}}} into {item.key}"
        if item.api_key:
            line += ": WARNING: this is your model API key; the server will receive it"
        elif item.credential:
            line += ": WARNING: looks like a credential; the server will receive it"
        if not item.is_set:
            line += " (not set)"
        lines.append(line)
    return lines


def describe_all(result: TrustCheck) -> list[str]:
    """One line per thing the project would do once trusted: first what changed since it
    was trusted (each file by name), then servers (each with its facts indented below),
    gated settings (each hook command in full), then the project files whose content is
    trusted with it (agents, commands, skills, the scripts servers, hooks, commands and
    skills run, and the notes that go into the prompt)."""
    lines = [f"changed since trusted: {name}" for name in result.changed_files[:FILES_SHOWN]]
    if len(result.changed_files) > FILES_SHOWN:
        lines.append(f"... and {len(result.changed_files) - FILES_SHOWN} more changed files")
    lines += [line for config in result.servers for line in describe(config, result.api_key_env)]
    for key, value in result.gated.items():
        if key == "hooks" or key.startswith("hooks ("):
            lines += _hooks(result, key)
            continue
        shown = ", ".join(value) if isinstance(value, list) else redact_url(str(value))
        lines.append(f"setting {key}: {shown}")
    for path in result.files[:FILES_SHOWN]:
        lines.append(f"file {_shown(path, result)}")
    if len(result.files) > FILES_SHOWN:
        lines.append(f"... and {len(result.files) - FILES_SHOWN} more files")
    for path in result.notes[:FILES_SHOWN]:
        lines.append(f"notes {_shown(path, result)} (into every prompt)")
    return lines


def _shown(path: Path, result: TrustCheck) -> str:
    from codebot_mcp.core.config.trust import relative

    return relative(path, result.root)


FILES_SHOWN = 30
"""Project files listed by name in the review (a skills folder can hold hundreds)."""


def _hooks(result: TrustCheck, key: str = "hooks") -> list[str]:
    """The project's hooks: event, matcher and the command line each would run (``key``:
    ``hooks``, or ``hooks (.claude/settings.json)`` for Claude Code's files)."""
    from pathlib import Path

    from codebot_mcp.core.config.hooks import parse_hooks

    origin = key[len("hooks (") : -1] if key != "hooks" else ""
    path = (result.root / origin) if origin and result.root else result.project_file
    where = f" ({origin})" if origin else ""
    try:
        hooks, _ = parse_hooks(path or Path(origin), {"hooks": result.gated[key]})
    except CodebotError:  # cannot happen: the settings loaded; say what is there anyway
        return [f"setting {key}: (unreadable)"]
    return [
        f"hook {h.event}{f' [{h.matcher}]' if h.matcher else ''}: runs {h.command}{where}"
        for h in hooks
    ]
