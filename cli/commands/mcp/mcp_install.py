"""``codebot mcp install NAME[@VERSION]``: a server from the MCP Registry into settings.

The command finds the server (``registry_url``, in order), picks how to run it, asks for the
values it needs (on the terminal, or lines on stdin), shows the entry it will write and asks
before writing it. The work is :mod:`core.registry.serverinstall`; this module asks and shows.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.commands.mcp.manage import ScopeChoice, ScopeOpt, warn_settings
from codebot_mcp.cli.commands.mcp.mcp_search import registry_urls
from codebot_mcp.core.errors import CodebotError, ExitCode, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from codebot_mcp.cli.runtime import Globals
    from codebot_mcp.core.registry.inputs import Question
    from codebot_mcp.core.registry.serverinstall import Option
    from codebot_mcp.core.registry.serverjson import ServerInfo

app = typer.Typer()
"""Holds ``install``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""

_FORMATS = {"number": "a number", "boolean": "true or false", "filepath": "a file path"}


def _line(prompt: str) -> str | None:
    """One answer from stdin (the prompt on stderr, so stdout holds the entry); None at its
    end."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        sys.stderr.write("\n")
        return None
    if not sys.stdin.isatty():  # a piped answer: show it, as a terminal would have
        sys.stderr.write(render.safe(line.rstrip("\r\n"), one_line=True) + "\n")
    return line.rstrip("\r\n")


class StdinAsker:
    """Asks on stderr, reads the answer from stdin: the terminal, or lines a script pipes."""

    def ask(self, question: Question, problem: str | None, again: bool) -> str | None:
        """One answer ("" for none), or None when stdin ended."""
        item = question.input
        safe = render.safe
        label = safe(question.label, one_line=True)
        if problem is not None:
            render.error_line(f"{question.label}: {problem}")
        elif not again:
            about = (
                f"{render.style(label, '1', sys.stderr)} ({safe(question.where, one_line=True)})"
            )
            if item.description:
                about += f": {safe(item.description, one_line=True)}"
            sys.stderr.write(about + "\n")
            details = []
            if item.choices:
                details.append(f"choices: {safe(', '.join(item.choices), one_line=True)}")
            if item.placeholder:
                details.append(f"e.g. {safe(item.placeholder, one_line=True)}")
            if item.format in _FORMATS:
                details.append(_FORMATS[item.format])
            if item.default:
                details.append("Enter takes the default")
            else:
                details.append("required" if item.is_required else "optional: Enter skips it")
            if item.is_repeated:
                details.append("repeatable: an empty answer ends the list")
            sys.stderr.write(f"  {'; '.join(details)}\n")
        shown_default = (
            f" [{safe(item.default, one_line=True)}]" if item.default and not again else ""
        )
        prefix = "another " if again else ""
        return _line(f"{prefix}{label}{shown_default}: ")


def _choose(server: ServerInfo, fitting: list[Option]) -> Option:
    """Ask which of several ways to run the server (Enter: the first)."""
    sys.stderr.write(f"{render.safe(server.name, one_line=True)} can run in several ways:\n")
    for i, option in enumerate(fitting, 1):
        sys.stderr.write(f"  {i}) {render.safe(option.label, one_line=True)}\n")
    for _ in range(5):
        answer = _line(f"Choose 1-{len(fitting)} [1]: ")
        if answer is None or not answer.strip():
            return fitting[0]
        if answer.strip().isdigit() and 1 <= int(answer) <= len(fitting):
            return fitting[int(answer) - 1]
        render.error_line(f"answer a number from 1 to {len(fitting)}")
    raise UsageError("no valid choice after 5 answers", hint="Pass --via to choose up front.")


def _confirm(question: str) -> bool:
    answer = _line(f"{question} [y/N] ")
    return answer is not None and answer.strip().lower() in ("y", "yes")


def _split(spec: str) -> tuple[str, str]:
    name, sep, version = spec.rpartition("@")
    if not sep:
        return spec, "latest"
    if not name or not version:
        raise UsageError(
            f"'{render.safe(spec, one_line=True)}': expected NAME or NAME@VERSION",
            hint="e.g. codebot mcp install io.github.example/weather@1.2.0",
        )
    return name, version


@app.command("install")
def install_command(
    ctx: typer.Context,
    spec: Annotated[
        str,
        typer.Argument(
            metavar="NAME[@VERSION]",
            help="The server's registry name (from `mcp search`), optionally at a version.",
            show_default=False,
        ),
    ],
    scope: ScopeOpt = ScopeChoice.GLOBAL,
    local_name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="LOCAL",
            help="The server's name in settings (default: the last part of NAME).",
            show_default=False,
        ),
    ] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="INPUT=VALUE",
            help="A value the server needs, by its variable, argument or environment name "
            "(repeatable).",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the entry install would write, write nothing.")
    ] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="Do not ask: take the first way to run it that fits, defaults for what is not "
            "given, write without confirming.",
        ),
    ] = False,
    via: Annotated[
        str | None,
        typer.Option(
            "--via",
            metavar="KIND",
            help="Run it this way: remote, or a package type (npm, pypi, oci, nuget, mcpb).",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an entry of the same name (an update).")
    ] = False,
) -> int:
    """Install a server from the MCP Registry: pick how to run it, ask what it needs, show
    the entry, write it after you confirm.

    Secrets are never written: the entry reads ${VAR} and you export VAR. Exit 0 written
    (or --dry-run), 1 declined or no way to run it here, 2 bad arguments, unknown server or
    a required input without a value, 3 settings unreadable.
    """
    from codebot_mcp.core.config import serveredit as settings_edit
    from codebot_mcp.core.registry import bundle as bundles
    from codebot_mcp.core.registry import serverinstall as plan
    from codebot_mcp.core.registry.inputs import parse_sets, resolve
    from codebot_mcp.core.registry.readapi import find

    globals_: Globals = ctx.obj
    name, version = _split(spec)
    warn_settings(globals_)
    local = local_name or plan.default_name(name)
    settings_edit.check_name(local)
    path = settings_edit.settings_file(scope.value, globals_.cwd)  # type: ignore[arg-type]
    document = settings_edit.read_document(path)
    entries = document.get(settings_edit.servers_key(document), {})
    if isinstance(entries, dict) and local in entries and not force:
        raise UsageError(
            f"server '{local}' already exists in {path}",
            hint="Pass --name OTHER to install beside it, or --force to replace it.",
        )
    server = find(registry_urls(globals_), name, version)
    if server.status == "deleted":
        raise UsageError(f"'{name}' {server.version} is deleted from {server.registry}")
    interactive = sys.stdin.isatty()
    option = _pick(server, via, yes, globals_.cwd)
    bundle = None
    if option.via == "mcpb":
        render.hint(f"downloading {server.packages[option.index].identifier} to check it")
        bundle = bundles.fetch(server.packages[option.index])
    asked = plan.questions(server, option, bundle.settings if bundle else None)
    answers = resolve(
        asked,
        parse_sets(sets or [], asked),
        asker=None if (yes and not interactive) else StdinAsker(),
        ask_optional=not yes,
        cwd=globals_.cwd,
    )
    bundle_entry = bundles.entry(bundle, answers, globals_.cwd) if bundle else None
    draft = plan.draft(server, option, asked, answers, bundle_entry=bundle_entry)
    settings_edit.validate_entry(local, draft.entry, path)
    _show(server, option, local, path, draft.entry, dry_run)
    for note in draft.notes:
        render.warn(note)
    _show_secrets(draft.secrets)
    if server.status == "deprecated":
        message = f": {server.status_message}" if server.status_message else ""
        render.warn(f"{name} {server.version} is deprecated{message}")
    if dry_run:
        print("dry run: nothing was written")
        return ExitCode.OK
    if not yes and not _confirm(f"Write '{local}' to {path}?"):
        render.warn("not installed; nothing was written")
        return ExitCode.DECLINED
    if bundle is not None:
        bundles.unpack(bundle)
        if bundle.replaced:
            render.warn(f"{bundle.replaced}: unpacked the checked bundle again")
    edit = settings_edit.add_server(path, local, draft.entry, force=force)
    print(f"installed server '{local}' in {edit.path}")
    _after(globals_, local, scope, draft.secrets)
    return ExitCode.OK


def _pick(server: ServerInfo, via: str | None, yes: bool, cwd: Path) -> Option:
    from codebot_mcp.core.registry import serverinstall as plan

    choices = plan.options(server, cwd)
    if via is not None:
        choices = [o for o in choices if o.via == via]
        if not choices:
            kinds = sorted({o.via for o in plan.options(server, cwd)})
            raise UsageError(
                f"--via {render.safe(via, one_line=True)}: {server.name} offers "
                f"{', '.join(kinds) or 'nothing to run'}"
            )
    fitting = [o for o in choices if o.fits]
    if not fitting:
        reasons = "; ".join(f"{o.label}: {o.reason}" for o in choices) or "it lists none"
        raise CodebotError(
            f"no way to run {server.name} here ({render.safe(reasons, one_line=True)})",
            hint="Install the runtime it needs (npx: Node.js, uvx: uv, docker, dnx: .NET), "
            "then run the install again.",
        )
    if len(fitting) == 1 or yes:
        return fitting[0]
    return _choose(server, fitting)


def _show(
    server: ServerInfo, option: Option, local: str, path: Path, entry: dict[str, Any], dry: bool
) -> None:
    safe = render.safe
    verb = "would write" if dry else "will write"
    print(
        f"{safe(server.name, one_line=True)} {safe(server.version, one_line=True)} from "
        f"{safe(server.registry, one_line=True)}, as {safe(option.label, one_line=True)}"
    )
    print(f"codebot {verb} this entry to {safe(path, one_line=True)}:")
    print(safe(json.dumps({local: entry}, indent=2, ensure_ascii=False)))


def _show_secrets(secrets: list[Question]) -> None:
    import os

    for question in secrets:
        state = "set" if question.variable in os.environ else "not set"
        about = f" ({question.input.description})" if question.input.description else ""
        render.hint(
            f"secret {question.variable}{about} is read from your environment ({state} now); "
            "codebot never writes it to a file"
        )


def _after(globals_: Globals, local: str, scope: ScopeChoice, secrets: list[Question]) -> None:
    import os

    from codebot_mcp.core.config import effective

    missing = [q.variable for q in secrets if q.variable not in os.environ]
    if missing:
        render.hint(
            "export "
            + " ".join(f"{v}=..." for v in missing)
            + " before you start it (or it fails, naming the variable)"
        )
    if scope is ScopeChoice.PROJECT:
        result = effective.load(globals_.cwd, assume_trusted=globals_.trust_project).trust
        if result.needs_trust:
            render.warn(
                f"'{local}' is in the project file, which is {result.state}: it does not start "
                "until you review and trust it (`codebot trust`)"
            )
            return
    render.hint(f"try it: codebot mcp list --server {local}")
