"""``codebot chat``: the REPL, or one prompt with ``-p`` (or piped on stdin).

Only typer and light modules load at import time: ``openai`` and ``prompt_toolkit`` are
imported when the command runs, so ``codebot --help`` stays fast.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli import render
from cli.runtime import Globals, apply_trust, load_settings, open_manager
from core.errors import CodebotError, ExitCode, ModelError

if TYPE_CHECKING:
    from collections.abc import Iterator

    import anyio

    from core import trust
    from core.agent import Agent, RunResult
    from core.model import ModelConfig
    from core.permissions import Approver, PermissionGate
    from core.session import Session
    from core.sessions import SessionLog
    from core.settings import Settings
    from mcpbridge.manager import Manager

    TrustPrompt = Callable[[trust.TrustCheck], Awaitable[bool]]
    """Asks the user whether to trust the project's servers (the REPL supplies one)."""


@dataclass
class ChatOptions:
    """The command line of ``chat``."""

    prompt: str | None = None
    as_json: bool = False
    yes: bool = False
    allow: list[str] = field(default_factory=list[str])
    plan: bool = False
    model: str | None = None
    base_url: str | None = None
    resume_latest: bool = False
    """``--continue``: resume the latest session of this project."""
    resume: str | None = None
    """``--resume ID``; ``""`` when ID was left out (pick from a list)."""


@dataclass
class ChatRuntime:
    """Everything a chat needs, wired: settings → manager → session → agent."""

    globals: Globals
    settings: Settings
    manager: Manager
    session: Session
    gate: PermissionGate
    agent: Agent | None
    model_error: ModelError | None
    """Why there is no agent (no key, no base URL); the REPL still starts and shows it."""
    untrusted: tuple[str, ...] = ()
    """Project servers skipped for this session because the project is not trusted."""
    options: ChatOptions | None = None
    """The command line, whose --model and --base-url beat the settings on every reload."""
    log: SessionLog | None = None
    """Where this conversation is saved."""


async def settle_trust(
    globals_: Globals, settings: Settings, ask: TrustPrompt | None
) -> tuple[Settings, tuple[str, ...]]:
    """Decide about the project's own servers before any of them starts.

    Without ``ask`` (one-shot, stdin not a terminal) untrusted project servers are skipped
    with a warning naming the fixes. With it the user is asked once: yes records trust (for
    this project file and its current server entries), no skips them for this session.

    Returns:
        The settings to run with, and the names of the skipped servers.
    """
    from core import trust  # deferred: `codebot --help` does not load settings or trust

    result = trust.check(settings, assume_trusted=globals_.trust_project)
    if not result.needs_trust:
        return settings, ()
    skipped = tuple(c.name for c in result.servers)
    if ask is None:
        return apply_trust(globals_, settings)[0], skipped
    if await ask(result):
        trust.record(result)
        return settings, ()
    render.warn(trust.untrusted_message(result))
    return trust.without_untrusted(settings, result), skipped


def register(app: typer.Typer) -> None:
    """Add the ``chat`` command to the root app."""
    app.command("chat")(chat_command)


def chat_command(
    ctx: typer.Context,
    prompt: Annotated[
        str | None, typer.Option("--prompt", "-p", help="Answer one prompt and exit.")
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
    model: Annotated[str | None, typer.Option("--model", help="Model name.")] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible API base URL.")
    ] = None,
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
) -> int:
    """Talk to the model; it uses read, edit, write, glob, grep, bash and every MCP tool.

    Exit 0 ok, 3 settings error, 5 model API error, 6 turn limit, 7 empty answer,
    130 interrupted.
    """
    globals_: Globals = ctx.obj
    options = ChatOptions(prompt, as_json, yes, list(allow or []), plan, model, base_url)
    options.resume_latest, options.resume = continue_, resume
    if options.prompt is None and not sys.stdin.isatty():
        options.prompt = sys.stdin.read()
    if options.prompt is not None and not options.prompt.strip():
        from core.errors import UsageError

        raise UsageError("the prompt is empty", hint='Pass one with -p "..." or on stdin.')
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


@asynccontextmanager
async def open_runtime(
    globals_: Globals,
    options: ChatOptions,
    approver: Approver | None,
    *,
    need_model: bool,
    ask_trust: TrustPrompt | None = None,
) -> AsyncIterator[ChatRuntime]:
    """Build the runtime; MCP servers are not started here (the caller decides when).

    Trust is settled first (see :func:`settle_trust`): an untrusted project server is not even
    launched, and stdio servers are launched ahead of ``start_all`` only once trusted.

    Raises:
        SettingsError: the settings cannot be read.
        ModelError: ``need_model`` and no model endpoint is configured.
    """
    import anyio

    from core.agent import Agent
    from core.builtin import builtin_tools
    from core.model import ChatModel, create_client, resolve_config
    from core.permissions import PermissionGate
    from core.session import Session

    settings, untrusted = await settle_trust(globals_, load_settings(globals_), ask_trust)
    config: ModelConfig | None = None
    model_error: ModelError | None = None
    try:
        config = resolve_config(settings, model=options.model, base_url=options.base_url)
    except ModelError as exc:
        if need_model:
            raise
        model_error = exc
    async with open_manager(settings.servers) as manager:
        session = Session(
            builtin_tools(globals_.cwd),
            manager,
            cwd=globals_.cwd,
            project_root=settings.project_root,
            plan_mode=options.plan,
        )
        gate = PermissionGate(
            settings.permissions, approver=approver, assume_yes=options.yes, allow=options.allow
        )
        session.set_tool_search(settings.tool_search)
        agent = None
        if config is not None:
            model = ChatModel(create_client(config), config)
            agent = Agent(session, model, gate)
            agent.configure(settings)
        runtime = ChatRuntime(
            globals_, settings, manager, session, gate, agent, model_error, untrusted, options
        )
        start_log(runtime, options)
        try:
            yield runtime
        finally:
            if agent is not None:
                with anyio.CancelScope(shield=True):
                    await agent.model.aclose()


async def refresh_model(runtime: ChatRuntime) -> None:
    """Follow the model settings after a reload: a changed model, endpoint or key gets a new
    client (the conversation is kept); settings that no longer resolve keep the current one.

    Raises:
        ModelError: nothing resolves and there was no model before either.
    """
    from core.agent import Agent
    from core.model import ChatModel, create_client, resolve_config

    options = runtime.options or ChatOptions()
    try:
        config = resolve_config(runtime.settings, model=options.model, base_url=options.base_url)
    except ModelError as exc:
        if runtime.agent is None:
            runtime.model_error = exc
        raise
    agent = runtime.agent
    if agent is not None and agent.model.config == config:
        return
    model = ChatModel(create_client(config), config)
    if agent is None:
        runtime.agent = Agent(runtime.session, model, runtime.gate)
        runtime.agent.configure(runtime.settings)
    else:
        await agent.model.aclose()
        agent.model = model
        agent.follow_model()
    runtime.model_error = None


def start_log(runtime: ChatRuntime, options: ChatOptions, session_id: str | None = None) -> None:
    """Save this conversation; with --continue/--resume (or ``session_id``), resume one first.

    Raises:
        UsageError: the session to resume does not exist.
    """
    from core import sessions

    project = runtime.settings.project_root or runtime.globals.cwd
    saved = None
    if session_id is not None:
        saved = sessions.find(project, session_id)
    elif options.resume_latest:
        saved = sessions.find(project, None)
    elif options.resume:
        saved = sessions.find(project, options.resume)
    model = runtime.agent.model.config.model if runtime.agent else None
    log = sessions.SessionLog(
        project,
        session_id=saved.id if saved else None,
        scrub=render.REDACTOR,
        meta={"cwd": str(runtime.globals.cwd), "model": model},
    )
    session = runtime.session
    if saved is not None:
        session.replace_history(sessions.replay(saved.path))
        log.adopt(session)
    session.recorder = log
    runtime.log = log


@contextmanager
def sigint_cancels(scope: anyio.CancelScope) -> Iterator[None]:
    """While inside, Ctrl-C (SIGINT) cancels ``scope`` instead of killing the process."""
    import asyncio

    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, scope.cancel)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        # remove_signal_handler installs Python's default handler; put back asyncio.Runner's,
        # which cancels the main task (an orderly unwind) instead of raising anywhere.
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def report_mcp(manager: Manager) -> None:
    """One line on stderr: which servers are ready, which failed."""
    ready = manager.connected()
    failures = manager.failures
    if not ready and not failures:
        return
    tools = len(manager.tools())
    parts = [f"{len(ready)} MCP server{'s' if len(ready) != 1 else ''} ready ({tools} tools)"]
    parts += [f"'{name}' failed: {f.message}" for name, f in failures.items()]
    line = "; ".join(parts)
    if failures:
        render.warn(line + " (/mcp or `codebot mcp doctor` for details)")
    else:
        print(render.style(line, "2", sys.stderr), file=sys.stderr)


async def one_shot(globals_: Globals, options: ChatOptions) -> int:
    """Answer ``options.prompt``: the answer on stdout, activity on stderr.

    With ``--json`` the transcript is printed on every exit (an error, the turn limit, an
    interrupt), with what already ran and the error in it.
    """
    import anyio

    from cli.chatview import Status, TurnView
    from core.agent import Outcome

    assert options.prompt is not None
    if options.resume == "":
        _list_for_resume(globals_)
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
        partial = agent.last
        if options.as_json:
            render.print_json(transcript(runtime, result or partial, failure))
        elif failure is not None and partial is not None and partial.text:
            print(partial.text)  # a dropped stream: what arrived is kept
        if failure is not None:
            raise failure
        if result is None:
            render.error_line("interrupted")
            return ExitCode.INTERRUPTED
        if result.outcome is Outcome.EMPTY:
            render.warn(empty_answer_message(result))
            return ExitCode.EMPTY_ANSWER
        if not options.as_json:
            print(result.text)
        return ExitCode.OK


def empty_answer_message(result: RunResult) -> str:
    """What to say when the model finished without a word."""
    why = f" (finish reason: {result.finish_reason})" if result.finish_reason else ""
    hint = (
        "; the answer hit the output cap: raise 'max_tokens' in settings.json"
        if result.finish_reason == "length"
        else "; ask again, or try a larger model"
    )
    return f"the model ended its turn with an empty answer{why}{hint}"


def _list_for_resume(globals_: Globals) -> None:
    from core import sessions
    from core.errors import UsageError

    settings = load_settings(globals_)
    saved = sessions.list_sessions(settings.project_root or globals_.cwd)
    for item in saved[:20]:
        print(render.REDACTOR(sessions.describe(item)), file=sys.stderr)
    raise UsageError(
        "--resume needs a session ID with -p (no one can pick from a list)",
        hint="Pass one of the IDs above (--resume ID), or --continue for the latest.",
    )


def usage_dict(agent: Agent | None, result: RunResult | None) -> dict[str, Any]:
    """Usage of the run, its last turn and the session, for ``--json`` (null: unknown)."""
    from core.stream import Usage

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
            }
            for r in records
        ],
        "messages": runtime.session.history,
        "error": (
            {"message": error.message, "hint": error.hint, "exit_code": int(error.exit_code)}
            if error is not None
            else None
        ),
    }


def show_error(exc: CodebotError) -> None:
    """Print an error and its hint (the REPL stays alive)."""
    render.error(exc)
