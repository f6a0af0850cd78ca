"""``codebot mcp doctor``: parse the options, run :func:`mcpbridge.doctor.run.diagnose`, render."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.commands.mcp.common import ServerOpt
from codebot_mcp.cli.runtime import (
    Globals,
    check_timeout,
    load_unfiltered_settings,
    select_servers,
    with_timeout,
)
from codebot_mcp.core.errors import ExitCode, SettingsError, UsageError


class Format(StrEnum):
    """Output formats of ``mcp doctor``."""

    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    SARIF = "sarif"


app = typer.Typer()
"""Holds ``doctor``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""


@app.command("doctor")
def doctor_command(
    ctx: typer.Context,
    server: ServerOpt = None,
    output_format: Annotated[
        Format,
        typer.Option(
            "--format",
            "-f",
            metavar="text|json|junit|sarif",
            help="text, json, junit (XML for CI) or sarif (SARIF 2.1.0, for code scanning).",
        ),
    ] = Format.TEXT,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail (exit 1) on warnings too, not only errors.")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", metavar="SECONDS", help="Handshake timeout in seconds, for every server."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="Write the report to FILE instead of stdout."
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Text: show notes, sources and every tool.")
    ] = False,
    list_checks: Annotated[
        bool, typer.Option("--list-checks", help="List every check (id, severity) and exit.")
    ] = False,
    login: Annotated[
        bool,
        typer.Option(
            "--login", help="Run the OAuth browser flow inline when a server needs authorization."
        ),
    ] = False,
    offline: Annotated[
        bool,
        typer.Option(
            "--offline",
            help="Do not ask registries for newer versions of installed servers.",
        ),
    ] = False,
) -> int:
    """Check the MCP configuration: settings, connections, tools, totals.

    Exit 0 when there is no error, 1 when there is one (with --strict: or a warning),
    3 when the settings cannot be read at all.
    """
    from dataclasses import replace

    from codebot_mcp.cli.commands.mcp import doctor_render
    from codebot_mcp.core.config import effective
    from codebot_mcp.mcpbridge.doctor import run as doctor

    if list_checks:
        rows = [[c.id, c.severity, c.summary] for c in doctor.CHECKS]
        print(render.table(rows))
        return ExitCode.OK
    if timeout is not None:
        check_timeout(timeout)
    globals_: Globals = ctx.obj
    try:
        unfiltered = load_unfiltered_settings(globals_)
        loaded = effective.apply(unfiltered, assume_trusted=globals_.trust_project)
    except SettingsError as exc:  # the managed settings file included
        report = doctor.unreadable(exc)
    else:
        settings, result = loaded.settings, loaded.trust
        from codebot_mcp.core.config.managed import server_verdict

        untrusted = (  # shown, never started; what the managed settings deny is not shown
            {c.name for c in result.servers if server_verdict(loaded.policy, c) is None}
            if result.needs_trust
            else set[str]()
        )
        # Trusted settings run everything (roots, limits, model); an untrusted project's own
        # entries are only reported (doctor never starts them).
        shown = replace(
            settings,
            servers=dict(
                sorted(
                    {
                        **settings.servers,
                        **{c.name: c for c in result.servers if c.name in untrusted},
                    }.items()
                )
            )
            if untrusted
            else settings.servers,
        )
        servers = with_timeout(select_servers(shown, server), timeout)
        from codebot_mcp.cli.login import login_options

        options = login_options() if login else None
        found: list[doctor.Report] = []

        async def diagnose() -> None:
            # Returns nothing: asyncio formats the main task's result on exit (an enum lookup
            # of the SIGINT handler), and the repr of a 10,000-server report is not free.
            found.append(
                await doctor.diagnose(
                    shown,
                    servers,
                    selected=bool(server),
                    untrusted=untrusted,
                    login=options,
                    offline=offline,
                    withheld=list(result.gated) if result.needs_trust else [],
                    trust_state=result.state if result.needs_trust else None,
                )
            )

        signals.run(diagnose)
        report = found[0]

    stream = sys.stdout
    if output_format is Format.JSON:
        text = doctor_render.as_json(report, strict=strict)
    elif output_format is Format.JUNIT:
        text = doctor_render.junit(report, strict=strict)
    elif output_format is Format.SARIF:
        from codebot_mcp.cli.commands.mcp.doctor_sarif import sarif

        text = sarif(report, strict=strict)
    else:
        color = output is None and render.use_color(stream)
        text = doctor_render.text(report, strict=strict, verbose=verbose, color=color)
    code = report.exit_code(strict=strict)
    if output is None:
        stream.write(text)
    else:
        try:
            from codebot_mcp.core.fsutil import atomic_write

            atomic_write(output, text, follow_symlinks=True)  # a link the user made is theirs
        except OSError as exc:
            raise UsageError(f"--output {output}: {exc.strerror or exc}") from None
        errors, warnings = report.count("error"), report.count("warning")
        print(
            f"doctor: {errors} errors, {warnings} warnings, exit {code}; report in {output}",
            file=sys.stderr,
        )
    return code
