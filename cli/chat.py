"""``codebot chat``: the REPL, or one prompt with ``-p`` (or piped on stdin).

Only typer and light modules load at import time: ``openai`` and ``prompt_toolkit`` are
imported when the command runs, so ``codebot --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli import render
from cli.runtime import ChatOptions, ChatRuntime, Globals, open_runtime, sigint_cancels
from core.errors import CodebotError, ExitCode

if TYPE_CHECKING:
    from core.agent import RunResult


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
        bool, typer.Option("--json", help="One-shot: print a JSON transcript on stdout.")
    ] = False,
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
) -> int:
    """Talk to the model; it uses read, write, bash and every configured MCP tool.

    Exit 0 ok, 3 settings error, 5 model API error, 6 turn limit, 130 interrupted.
    """
    globals_: Globals = ctx.obj
    model, base_url = model or globals_.model, base_url or globals_.base_url
    options = ChatOptions(prompt, as_json, yes, list(allow or []), plan, model, base_url)
    if options.prompt is None and not sys.stdin.isatty():
        options.prompt = sys.stdin.read()
    if options.prompt is not None and not options.prompt.strip():
        from core.errors import UsageError

        raise UsageError("the prompt is empty", hint='Pass one with -p "..." or on stdin.')
    if options.base_url is None:
        from cli.models import offer_local

        offer_local(globals_, options, interactive=options.prompt is None and sys.stdin.isatty())
    import anyio  # deferred with the rest of the chat machinery: `--help` stays light

    try:
        if options.prompt is not None:
            return anyio.run(one_shot, globals_, options)
        from cli.repl import repl

        return anyio.run(repl, globals_, options)
    except KeyboardInterrupt:
        # Ctrl-C outside a cancellable stretch (imports, settings, shutdown): the event
        # loop has already unwound (servers stopped); say so instead of exiting silently.
        render.error_line("interrupted")
        return ExitCode.INTERRUPTED


async def one_shot(globals_: Globals, options: ChatOptions) -> int:
    """Answer ``options.prompt``: the answer on stdout, activity on stderr."""
    import anyio

    from cli.chatview import Status, TurnView, report_mcp

    assert options.prompt is not None
    async with open_runtime(globals_, options, None, need_model=True) as runtime:
        agent = runtime.agent
        assert agent is not None
        status = Status()
        view = TurnView(status, stream_text=False)
        result: RunResult | None = None
        failure: CodebotError | None = None
        # Ctrl-C anywhere from the handshakes to the answer cancels this scope: the servers
        # are then stopped by open_runtime's exit, and the run ends with 130.
        with anyio.CancelScope() as scope, sigint_cancels(scope):
            await runtime.manager.start_all()
            report_mcp(runtime.manager)
            async with anyio.create_task_group() as tg:
                tg.start_soon(status.run)
                try:
                    result = await agent.run(options.prompt, view)
                except CodebotError as exc:  # raised below, outside the group: not wrapped
                    failure = exc
                finally:
                    tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        if result is None:
            render.error_line("interrupted")
            return ExitCode.INTERRUPTED
        if options.as_json:
            render.print_json(transcript(runtime, result))
        else:
            print(result.text)
        return ExitCode.OK


def transcript(runtime: ChatRuntime, result: RunResult) -> dict[str, Any]:
    """The ``--json`` document: messages, tool calls with results, usage."""
    agent = runtime.agent
    return {
        "model": agent.model.config.model if agent else None,
        "answer": result.text,
        "turns": result.turns,
        "usage": {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
        },
        "tool_calls": [
            {
                "id": r.call.id,
                "name": r.call.name,
                "arguments": r.call.arguments,
                "result": r.result.text,
                "is_error": r.result.is_error,
                "denied": r.denied,
                "reason": r.reason,
                "seconds": round(r.seconds, 3),
            }
            for r in result.tool_calls
        ],
        "messages": runtime.session.history,
    }
