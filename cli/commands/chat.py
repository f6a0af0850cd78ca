"""``codebot chat``: the REPL, or one prompt with ``-p`` (or piped on stdin).

Only typer and light modules load at import time: ``openai`` and ``prompt_toolkit`` are
imported when the command runs, so ``codebot --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.commands.mcp.common import AllowSamplingOpt, ElicitOpt
from codebot_mcp.cli.runtime import Globals, load_effective
from codebot_mcp.cli.signals import sigint_cancels
from codebot_mcp.core.errors import CodebotError, ExitCode, UsageError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatOptions, ChatRuntime
    from codebot_mcp.core.agent.commands import CustomCommand
    from codebot_mcp.core.agent.loop import Agent, RunResult


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
    elicit: ElicitOpt = None,
    allow_sampling: AllowSamplingOpt = None,
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
    verbose: Annotated[
        bool,
        typer.Option("--verbose", help="With -p: a preview of each tool's result on stderr."),
    ] = False,
) -> int:
    """Talk to the model; it uses read, edit, write, glob, grep, bash and every MCP tool.

    Exit 0 ok, 2 usage (a bad option, an empty prompt, no such session to resume), 3
    settings error, 5 model API error, 6 turn limit, 7 empty answer, 130 interrupted.
    """
    # the chat's runtime on use: `codebot --help` builds this command without running it
    from codebot_mcp.cli.chat_runtime import ChatOptions, sandbox_mode

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
    options.sandbox = sandbox_mode(sandbox)
    options.verbose = verbose
    if continue_ and resume is not None:
        raise UsageError(
            "--continue and --resume both pick a session to resume",
            hint="Use --continue for the latest session, or --resume [ID] for a given one.",
        )
    if options.prompt is None and not sys.stdin.isatty():
        options.prompt = sys.stdin.read()
    if options.prompt is not None and not options.prompt.strip():
        raise UsageError("the prompt is empty", hint='Pass one with -p "..." or on stdin.')
    if options.base_url is None:
        from codebot_mcp.cli.commands.models import offer_local

        offer_local(globals_, options, interactive=options.prompt is None and sys.stdin.isatty())

    try:
        if options.prompt is not None:
            return signals.run(one_shot, globals_, options)
        from codebot_mcp.cli.repl.loop import repl

        return signals.run(repl, globals_, options, one_shot=False)
    except KeyboardInterrupt:
        # Ctrl-C outside a cancellable stretch (imports, settings, shutdown): the event
        # loop has already unwound (servers stopped); say so instead of exiting silently.
        render.error_line("interrupted")
        return ExitCode.INTERRUPTED


async def one_shot(globals_: Globals, options: ChatOptions) -> int:
    """Answer ``options.prompt``: the answer on stdout, activity on stderr.

    With ``--json`` the transcript is printed on every exit (an error, the turn limit, an
    interrupt), with what already ran and the error in it.
    """
    import anyio

    from codebot_mcp.cli import extensions
    from codebot_mcp.cli.chat_runtime import open_runtime
    from codebot_mcp.cli.repl.chatview import Status, TurnView, empty_answer_message, report_mcp
    from codebot_mcp.core.agent.loop import Outcome

    assert options.prompt is not None
    if options.resume == "":
        _list_for_resume(globals_)
    builtin = _builtin_name(options.prompt)
    async with open_runtime(globals_, options, None, need_model=builtin is None) as runtime:
        if builtin is not None:
            return await _run_builtin(runtime, options, builtin)
        agent = runtime.agent
        assert agent is not None
        prompt, command = _custom_command(runtime, options.prompt)
        status = Status()
        view = TurnView(status, stream_text=False, previews=options.verbose)
        result: RunResult | None = None
        failure: CodebotError | None = None
        # Ctrl-C anywhere from the handshakes to the answer cancels this scope: the servers
        # are then stopped by open_runtime's exit, and the run ends with 130.
        with anyio.CancelScope() as scope, sigint_cancels(scope):
            await runtime.manager.start_all()
            report_mcp(runtime.manager)
            for line in await runtime.resume_tasks():  # --continue: tasks left running
                print(render.safe(line), file=sys.stderr)
            from codebot_mcp.core.tools import live

            async with anyio.create_task_group() as tg:
                tg.start_soon(status.run)
                live.WATCHER.set(view.watch)  # --verbose: bash output streams to stderr
                try:
                    async with extensions.running(agent, command):
                        result = await agent.run(prompt, view)
                except CodebotError as exc:  # raised below, outside the group: not wrapped
                    failure = exc
                finally:
                    tg.cancel_scope.cancel()
        partial = agent.last
        if options.as_json:
            from codebot_mcp.core.agent.history import scrubbed

            document = transcript(runtime, result or partial, failure)
            render.print_json(scrubbed(document, render.REDACTOR))
        elif failure is not None and partial is not None and partial.text:
            print(render.safe(partial.text))  # a dropped stream: what arrived is kept
        if failure is not None:
            raise failure
        if result is None:
            render.error_line("interrupted")
            return ExitCode.INTERRUPTED
        if result.outcome is Outcome.EMPTY:
            render.warn(empty_answer_message(result))
            return ExitCode.EMPTY_ANSWER
        if not options.as_json:
            print(render.safe(result.text))
        return ExitCode.OK


ONE_SHOT_COMMANDS = (
    *("/help", "/tools", "/context", "/usage", "/sandbox", "/hooks", "/agents"),
    *("/memory", "/init", "/skills"),
)
"""The REPL's report commands that ``-p`` runs too (``codebot chat -p /memory``)."""


def _builtin_name(prompt: str) -> str | None:
    """The built-in command ``prompt`` names, if it is one (a custom command never is)."""
    name = prompt.strip().split(" ", 1)[0]
    return name if name in ONE_SHOT_COMMANDS else None


class _OneShotHost:
    """What the REPL's notes and skills commands need of the REPL, without a terminal: a
    question is answered yes only with ``--yes`` (``/init`` over an existing AGENTS.md)."""

    def __init__(self, runtime: ChatRuntime, yes: bool) -> None:
        from codebot_mcp.cli.repl.chatview import Status

        self.runtime: ChatRuntime | None = runtime
        self.status = Status()
        self.yes = yes

    async def ask(self, question: str) -> str:
        answer = "y" if self.yes else "n"
        note = "" if self.yes else " (no terminal: pass --yes to answer yes)"
        print(f"{render.safe(question.strip())} {answer}{note}", file=sys.stderr)
        return answer

    async def turn(self, line: str, *, mentions: bool = True) -> None:
        raise UsageError("a built-in command cannot start a turn in -p")


async def _run_builtin(runtime: ChatRuntime, options: ChatOptions, name: str) -> int:
    """Run a REPL report command for ``-p``; its output on stdout (``--json``: in a
    document ``{"command", "output", "exit_code"}``)."""
    import contextlib
    import io

    from codebot_mcp.cli.repl.loop import REPORTS
    from codebot_mcp.cli.repl.memory import NOTES_AND_SKILLS

    assert options.prompt is not None
    rest = options.prompt.strip()[len(name) :].strip()
    await runtime.manager.start_all()  # /tools and /skills show the servers' too
    out = io.StringIO()
    with contextlib.redirect_stdout(out) if options.as_json else contextlib.nullcontext():
        if name in REPORTS:
            print(REPORTS[name](runtime))
        else:
            await NOTES_AND_SKILLS[name](_OneShotHost(runtime, options.yes), rest)
    if options.as_json:
        render.print_json({"command": name, "output": out.getvalue(), "exit_code": 0})
    return ExitCode.OK


def _custom_command(runtime: ChatRuntime, prompt: str) -> tuple[str, CustomCommand | None]:
    """``-p "/review src/app.py"``: a custom command's prompt; anything else as written."""
    import re

    from codebot_mcp.cli import extensions

    found = extensions.command_for(runtime.ext, prompt)
    if found is not None:
        command, text = found
        print(render.style(f"(/{command.name})", "2", sys.stderr), file=sys.stderr)
        return text, command
    head = prompt.strip().split(" ", 1)[0]
    if re.fullmatch(r"/[A-Za-z0-9_][A-Za-z0-9_.:-]*", head):
        names = ", ".join(f"/{n}" for n in runtime.ext.commands.commands) if runtime.ext else ""
        render.warn(
            f"'{head}' is not a custom command, so the prompt goes to "
            f"the model as written (custom commands: {names or 'none'})"
        )
    return prompt, None


def _list_for_resume(globals_: Globals) -> None:
    from codebot_mcp.core.agent import history as sessions

    settings = load_effective(globals_, warn=False).settings
    saved = sessions.list_sessions(settings.project_root or globals_.cwd)
    for item in saved[:20]:
        print(render.safe(sessions.describe(item)), file=sys.stderr)
    raise UsageError(
        "--resume needs a session ID with -p (no one can pick from a list)",
        hint="Pass one of the IDs above (--resume ID), or --continue for the latest.",
    )


def usage_dict(agent: Agent | None, result: RunResult | None) -> dict[str, Any]:
    """Usage of the run, its last turn and the session, for ``--json`` (null: unknown)."""
    from codebot_mcp.core.model.stream import Usage

    return {
        **(result.usage if result else Usage()).as_dict(),
        "last_turn": result.last_usage.as_dict() if result and result.last_usage else None,
        "session": agent.usage.as_dict() if agent else None,
        "summary_requests": agent.budget.summary_requests if agent else 0,
    }


def transcript(
    runtime: ChatRuntime, result: RunResult | None, error: CodebotError | None = None
) -> dict[str, Any]:
    """The ``--json`` document: outcome, messages, tool calls with results, usage, error."""
    agent = runtime.agent
    records = result.tool_calls if result else []
    return {
        "model": agent.model.config.model if agent else None,
        "served_model": agent.model.served_model if agent else None,
        "session_id": runtime.log.id if runtime.log else None,
        "outcome": (result.outcome.value if result else "error") if error is None else "error",
        "answer": result.text if result else "",
        "finish_reason": result.finish_reason if result else None,
        "turns": result.turns if result else 0,
        "usage": usage_dict(agent, result),
        "compactions": [
            {
                "before_tokens": c.before,
                "after_tokens": c.after,
                "cut_tool_results": c.cut_results,
                "summarised_messages": c.summarised_messages,
                "in_turn": c.in_turn,
                "shortened_results": c.shortened_results,
            }
            for c in (result.compactions if result else [])
        ],
        "tool_calls": [
            {
                "id": r.call.id,
                "name": r.call.name,
                "arguments": r.call.arguments,
                "result": r.result.text,
                "is_error": r.result.is_error,
                "denied": r.denied,
                "rejected": r.rejected,
                "reason": r.reason,
                "seconds": round(r.seconds, 3),
                "sandbox": r.result.data.get("sandbox"),
            }
            for r in records
        ],
        "sandbox": runtime.sandbox.mode if runtime.sandbox else None,
        "messages": runtime.session.history,
        "error": _error_dict(result, error),
        "exit_code": int(_exit_code(result, error)),
    }


def _exit_code(result: RunResult | None, error: CodebotError | None) -> ExitCode:
    """The exit code the run ends with (the same as the process's)."""
    from codebot_mcp.core.agent.loop import Outcome

    if error is not None:
        return error.exit_code
    if result is None or result.outcome is Outcome.INTERRUPTED:
        return ExitCode.INTERRUPTED
    return ExitCode.EMPTY_ANSWER if result.outcome is Outcome.EMPTY else ExitCode.OK


def _error_dict(result: RunResult | None, error: CodebotError | None) -> dict[str, Any] | None:
    if error is not None:
        return {"message": error.message, "hint": error.hint, "exit_code": int(error.exit_code)}
    if _exit_code(result, error) is ExitCode.INTERRUPTED:
        return {"message": "interrupted", "hint": None, "exit_code": int(ExitCode.INTERRUPTED)}
    return None
