"""``codebot mcp get NAME``: the entry codebot uses, where it comes from, secrets masked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.commands.mcp.manage import NameArg, known_server
from codebot_mcp.cli.runtime import Globals, load_unfiltered_settings
from codebot_mcp.core.errors import ExitCode

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig

app = typer.Typer()
"""Holds ``get``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""


@app.command("get")
def get_command(
    ctx: typer.Context,
    name: NameArg,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> int:
    """Show a server's entry as codebot uses it, where it comes from and what it overrides.

    Env and header values that are secrets are masked; configuration and ${VAR} references
    are shown.
    Exit 0, 2 unknown server, 3 settings unreadable.
    """
    from codebot_mcp.core.config import effective

    globals_: Globals = ctx.obj
    settings = load_unfiltered_settings(globals_)  # shows what trust holds back, runs nothing
    config = known_server(settings, name)
    check = effective.apply(settings, assume_trusted=globals_.trust_project).trust
    untrusted = check.needs_trust and any(c.name == name for c in check.servers)
    # An untrusted project entry never hides yours: the global entry is the one in use.
    pending = config if untrusted and name in settings.shadowed else None
    used = settings.shadowed[name] if pending is not None else config
    view = entry_view(used, untrusted=untrusted and pending is None)
    if pending is not None:
        view["overridden_by_untrusted"] = {
            "source": str(pending.source),
            "entry": entry_view(pending, untrusted=True)["entry"],
        }
    if as_json:
        render.print_json(view)
        return ExitCode.OK
    state = "disabled" if not used.enabled else ("not usable" if used.error else "enabled")
    if untrusted and pending is None:
        state += f", project {check.state}: will not start"
    print(f"{render.style(render.safe(name), '1')}  ({state})")
    print(f"  from {render.safe(view['source'])}")
    if view["overrides"]:
        print(f"  overrides the entry in {render.safe(view['overrides'])}")
    if pending is not None:
        print(
            f"  the entry in {render.safe(pending.source)} replaces it once the project is trusted "
            "(`codebot trust`)"
        )
    if used.error and used.enabled:
        print(f"  problem: {render.safe(used.error)}")
        if used.hint:
            print(f"  hint: {render.safe(used.hint)}")
    for key, value in view["entry"].items():
        print(f"  {render.safe(key, one_line=True)}: {render.safe(_show(value), one_line=True)}")
    return ExitCode.OK


def entry_view(config: ServerConfig, *, untrusted: bool) -> dict[str, Any]:
    """The entry as written, with secrets masked, plus its source and what it overrides."""
    from codebot_mcp.core.config.oauth import SECRET_KEYS
    from codebot_mcp.core.secrets.redact import MASK, redact_url

    entry: dict[str, Any] = {}
    for key, value in config.raw.items():
        if key in ("env", "headers") and isinstance(value, dict):
            entry[key] = {
                k: (v if isinstance(v, str) and _shown(str(k), v) else MASK)
                for k, v in value.items()
            }
        elif key == "oauth" and isinstance(value, dict):
            # client_secret and private_key: shown only as the ${VAR} they name, never a value
            entry[key] = {
                k: (v if not isinstance(v, str) or _only_references(v) else MASK)
                if k in SECRET_KEYS
                else (render.REDACTOR(v) if isinstance(v, str) else v)
                for k, v in value.items()
            }
        elif key == "url" and isinstance(value, str):
            entry[key] = redact_url(value)
        elif key == "args" and isinstance(value, list):
            entry[key] = [
                render.REDACTOR(redact_url(a)) if isinstance(a, str) else a for a in value
            ]
        else:
            entry[key] = value
    return {
        "name": config.name,
        "source": str(config.source),
        "overrides": str(config.overrides) if config.overrides else None,
        "enabled": config.enabled,
        "trusted": not untrusted,
        "transport": config.type,
        "error": render.REDACTOR(config.error) if config.error else None,
        "warnings": [render.REDACTOR(str(w)) for w in config.warnings],
        "entry": entry,
    }


def _shown(key: str, value: str) -> bool:
    """An env or header value as written is shown unless it is a secret (the one heuristic,
    :func:`core.secrets.credentials.is_secret`); ``${VAR}`` references always are."""
    from codebot_mcp.core.secrets.credentials import is_secret

    if "${" in value:
        return _only_references(value)
    return not is_secret(key, value)


def _only_references(value: str) -> bool:
    """A value whose secret parts are all ``${VAR}`` references (``Bearer ${TOKEN}``)."""
    import re

    from codebot_mcp.core.secrets.scan import looks_secret

    rest = re.sub(r"\$\{[^}]*\}", "", value)
    return "${" in value and not looks_secret("", rest) and len(rest.strip()) <= 16


def _show(value: Any) -> str:
    import json

    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
