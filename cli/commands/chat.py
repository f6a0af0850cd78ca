"""``codebot chat``: the REPL, or one prompt with ``-p`` (or piped on stdin, or stream-json
messages): the headless runs live in :mod:`cli.commands.headless`.

Only typer and light modules load at import time: ``openai`` and ``prompt_toolkit`` are
imported when the command runs, so ``codebot --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.commands.mcp.common import AllowDriftOpt, AllowSamplingOpt, ElicitOpt
from codebot_mcp.cli.runtime import Globals
from codebot_mcp.core.errors import ExitCode, UsageError

app = typer.Typer()
"""Holds ``chat``; :mod:`cli.app` adds it to the root."""


@app.command("chat")
def chat_command(
    ctx: typer.Context,
    prompt: Annotated[
        str | None,
        typer.Option("--prompt", "-p", metavar="PROMPT", help="Answer one prompt and exit."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="One-shot: print a JSON transcript (--output-format json)."),
    ] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--output-format",
            metavar="text|json|stream-json",
            help="One-shot output: the answer (text), a JSON transcript (json), or events as "
            "JSON lines as they happen (stream-json).",
        ),
    ] = "text",
    input_format: Annotated[
        str,
        typer.Option(
            "--input-format",
            metavar="text|stream-json",
            help="stream-json: user messages as JSON lines on stdin, one conversation "
            "(needs --output-format stream-json).",
        ),
    ] = "text",
    include_partial: Annotated[
        bool,
        typer.Option(
            "--include-partial", help="stream-json: also the text as it streams (deltas)."
        ),
    ] = False,
    output_schema: Annotated[
        str | None,
        typer.Option(
            "--output-schema",
            metavar="FILE",
            help="The final answer must be JSON valid against the JSON Schema in FILE.",
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call.")] = False,
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Allow tools matching GLOB (repeatable).", metavar="GLOB"),
    ] = None,
    plan: Annotated[bool, typer.Option("--plan", help="Start in plan mode (read-only).")] = False,
    model: Annotated[
        str | None, typer.Option("--model", metavar="NAME", help="Model name.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", metavar="URL", help="OpenAI-compatible API base URL."),
    ] = None,
    elicit: ElicitOpt = None,
    allow_sampling: AllowSamplingOpt = None,
    allow_drift: AllowDriftOpt = False,
    continue_: Annotated[
        bool,
        typer.Option("--continue", "-c", help="Resume the latest session of this project."),
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", help="Resume session ID (a list to pick from without ID).", metavar="[ID]"
        ),
    ] = None,
    sandbox: Annotated[
        str | None,
        typer.Option(
            "--sandbox",
            metavar="MODE",
            help="Run bash confined for this run: read-only, workspace-write or off "
            "(default: the 'sandbox' setting; workspace-write where supported).",
        ),
    ] = None,
    image: Annotated[
        list[str] | None,
        typer.Option(
            "--image",
            metavar="PATH",
            help="An image (PNG, JPEG, GIF, WebP) for the model with the prompt (repeatable; "
            "in the REPL, with the first message).",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", help="With -p: a preview of each tool's result on stderr."),
    ] = False,
    api: Annotated[
        str | None,
        typer.Option(
            "--api",
            metavar="API",
            help="The model API: chat_completions or responses (default: the 'api' setting; "
            "responses for a reasoning model at api.openai.com).",
        ),
    ] = None,
    effort: Annotated[
        str | None,
        typer.Option(
            "--effort",
            metavar="LEVEL",
            help="Reasoning effort: low, medium or high (default: 'reasoning_effort').",
        ),
    ] = None,
) -> int:
    """Talk to the model; it uses read, edit, write, glob, grep, bash and every MCP tool.

    Exit 0 ok, 1 the answer does not match --output-schema, 2 usage (a bad option, an empty
    prompt, no such session to resume), 3 settings error, 5 model API error, 6 turn limit, 7
    empty answer, 130 interrupted.
    """
    # the chat's runtime on use: `codebot --help` builds this command without running it
    from codebot_mcp.cli.chat_parts import sandbox_mode
    from codebot_mcp.cli.chat_runtime import ChatOptions
    from codebot_mcp.cli.commands import headless

    globals_: Globals = ctx.obj
    model, base_url = model or globals_.model, base_url or globals_.base_url
    options = ChatOptions(
        prompt,
        as_json,
        yes,
        list(allow or []),
        plan,
        model,
        base_url,
        elicit,
        list(allow_sampling or []),
    )
    options.resume_latest, options.resume = continue_, resume
    options.verbose = verbose
    options.images = list(image or [])
    options.allow_drift = allow_drift
    options.output_format = "json" if as_json and output_format == "text" else output_format
    options.input_format = input_format
    options.include_partial = include_partial

    def prepare() -> None:
        headless.check_formats(options, as_json=as_json)
        options.as_json = options.output_format == "json"
        options.sandbox = sandbox_mode(sandbox)
        options.api, options.effort = model_flags(api, effort)
        if continue_ and resume is not None:
            raise UsageError(
                "--continue and --resume both pick a session to resume",
                hint="Use --continue for the latest session, or --resume [ID] for a given one.",
            )
        streamed = options.input_format == "stream-json"
        if options.prompt is None and not streamed and not sys.stdin.isatty():
            options.prompt = sys.stdin.read()
        if options.prompt is not None and not options.prompt.strip():
            raise UsageError("the prompt is empty", hint='Pass one with -p "..." or on stdin.')
        if one_shot and options.prompt is None and not streamed:
            raise UsageError(
                "--output-format, --output-schema and --json answer one prompt, and there is none",
                hint='Pass it with -p "...", on stdin, or as stream-json lines '
                "(--input-format stream-json).",
            )
        if output_schema is not None:
            from pathlib import Path

            from codebot_mcp.core.agent.outputschema import load

            options.output_schema = load(Path(output_schema).expanduser())

    one_shot = (
        prompt is not None
        or input_format != "text"
        or output_format != "text"
        or as_json
        or output_schema is not None
        or not sys.stdin.isatty()
    )
    try:
        if one_shot:
            return headless.run(globals_, options, prepare)
        prepare()
        if options.base_url is None:
            from codebot_mcp.cli.commands.models import offer_local

            offer_local(globals_, options, interactive=True)
        from codebot_mcp.cli.repl.repl_loop import repl

        return signals.run(repl, globals_, options, one_shot=False)
    except KeyboardInterrupt:
        # Ctrl-C outside a cancellable stretch (imports, settings, shutdown): the event
        # loop has already unwound (servers stopped); say so instead of exiting silently.
        render.error_line("interrupted")
        return ExitCode.INTERRUPTED


def model_flags(api: str | None, effort: str | None) -> tuple[str | None, str | None]:
    """``--api`` and ``--effort``, checked (a usage error names the values)."""
    from codebot_mcp.core.config.keys import MODEL_APIS, REASONING_EFFORTS
    from codebot_mcp.core.model.config import flag_value

    return flag_value("--api", api, MODEL_APIS), flag_value("--effort", effort, REASONING_EFFORTS)
