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
from cli.mcp_resources import AllowSamplingOpt, ElicitOpt
from cli.runtime import Globals, apply_trust, load_settings, open_manager, policy
from core.errors import CodebotError, ExitCode, ModelError

if TYPE_CHECKING:
    from collections.abc import Iterator

    import anyio

    from core import trust
    from core.agent import Agent, RunResult
    from core.model import ModelConfig
    from core.permissions import Approver, PermissionGate
    from core.session import Session
    from core.settings import Settings
    from core.useragent import UserAgent
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
    elicit: str | None = None
    allow_sampling: list[str] = field(default_factory=list[str])


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
    elicit: ElicitOpt = None,
    allow_sampling: AllowSamplingOpt = None,
) -> int:
    """Talk to the model; it uses read, write, bash and every configured MCP tool.

    Exit 0 ok, 3 settings error, 5 model API error, 6 turn limit, 130 interrupted.
    """
    globals_: Globals = ctx.obj
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
    user_agent: UserAgent | None = None,
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
    from core.resource_tools import resource_tools
    from core.sampling import Sampler

    agent: Agent | None = None
    held: list[ChatRuntime] = []  # the sampler follows the runtime's model (it may change)
    sampler = Sampler(lambda: held[0].agent.model if held and held[0].agent else None)
    agent_for_servers = user_agent or policy(settings, options.elicit, options.allow_sampling)
    async with open_manager(settings.servers, agent=agent_for_servers, sampler=sampler) as manager:
        local = builtin_tools(globals_.cwd)
        if settings.servers:
            local += resource_tools(manager)
        session = Session(
            local,
            manager,
            cwd=globals_.cwd,
            project_root=settings.project_root,
            plan_mode=options.plan,
        )
        gate = PermissionGate(
            settings.permissions, approver=approver, assume_yes=options.yes, allow=options.allow
        )
        if config is not None:
            model = ChatModel(create_client(config), config)
            agent = Agent(
                session,
                model,
                gate,
                max_turns=settings.max_turns,
                tool_result_max_tokens=settings.tool_result_max_tokens,
            )
            agent.sampler = sampler
        runtime = ChatRuntime(
            globals_, settings, manager, session, gate, agent, model_error, untrusted, options
        )
        held.append(runtime)
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
        runtime.agent = Agent(
            runtime.session,
            model,
            runtime.gate,
            max_turns=runtime.settings.max_turns,
            tool_result_max_tokens=runtime.settings.tool_result_max_tokens,
        )
        runtime.agent.sampler = runtime.manager.sampler
    else:
        await agent.model.aclose()
        agent.model = model
    runtime.model_error = None


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
    """Answer ``options.prompt``: the answer on stdout, activity on stderr."""
    import anyio

    from cli.chatview import Status, TurnView

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


def show_error(exc: CodebotError) -> None:
    """Print an error and its hint (the REPL stays alive)."""
    render.error(exc)
