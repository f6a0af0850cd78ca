"""``codebot mcp serve``: codebot's own tools as an MCP server on stdio (parse, compose, run).

The composition (:func:`compose`) is ``chat``'s: trust-filtered settings, the built-in tools
of the working directory with the project-root boundary, the permission gate with ``--yes``
and ``--allow``, chat's sandbox around ``bash``, chat's hooks, and for ``ask`` a whole ``chat
-p`` runtime per call (:class:`ChatAsker`). The command serves it on stdio; the tests serve
the same composition in their own process. The protocol side lives in :mod:`mcpbridge.serve`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli.commands.mcp.common import AllowDriftOpt, AllowSamplingOpt, ElicitOpt
from codebot_mcp.cli.runtime import (
    Globals,
    apply_trust,
    load_unfiltered_settings,
    session_pins,
)
from codebot_mcp.core.errors import ExitCode

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatOptions
    from codebot_mcp.core.agent.events import AgentEvents
    from codebot_mcp.core.agent.permissions import Approver
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.hooks.runner import Hooks
    from codebot_mcp.core.sandbox.confinement import Sandbox
    from codebot_mcp.mcpbridge.serve import AskOutcome, Served

app = typer.Typer()
"""Holds ``serve``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""


@app.command("serve")
def serve_command(
    ctx: typer.Context,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve every tool call (deny rules still win).")
    ] = False,
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Allow tools matching GLOB (repeatable).", metavar="GLOB"),
    ] = None,
    elicit: ElicitOpt = None,
    allow_sampling: AllowSamplingOpt = None,
    allow_drift: AllowDriftOpt = False,
    sandbox: Annotated[
        str | None,
        typer.Option(
            "--sandbox",
            metavar="MODE",
            help="Run bash confined: read-only, workspace-write or off (default: the "
            "'sandbox' setting; workspace-write where supported), as in chat.",
        ),
    ] = None,
) -> int:
    """Serve codebot's tools over MCP on stdio: read, edit, write, glob, grep, bash and ask.

    Use it from another MCP client, e.g. `claude mcp add codebot -- codebot mcp serve`. The
    same trust, boundary, sandbox and permission rules apply as in `chat`: a call that would
    ask is asked of the client (elicitation) when it supports that, and refused otherwise,
    unless --yes or --allow lets it run. `ask` runs a `chat -p` session and returns its answer and a
    transcript summary; --elicit and --allow-sampling apply to that session's servers.

    Exit 0 when the client closes the connection, 3 settings error, 130 interrupted.
    """

    from codebot_mcp.cli import signals
    from codebot_mcp.core.errors import InterruptionError
    from codebot_mcp.mcpbridge.serve import serve_stdio

    served, confined = compose(
        ctx.obj,
        yes=yes,
        allow=allow,
        elicit=elicit,
        allow_sampling=allow_sampling,
        sandbox=sandbox,
        allow_drift=allow_drift,
    )
    try:  # serves until the client leaves: its sessions' servers are stopped here, not reaped
        signals.run(serve_stdio, served, one_shot=False)
    except InterruptionError:
        return ExitCode.INTERRUPTED
    finally:
        confined.close()
    return ExitCode.OK


def compose(
    globals_: Globals,
    *,
    yes: bool = False,
    allow: list[str] | None = None,
    elicit: str | None = None,
    allow_sampling: list[str] | None = None,
    sandbox: str | None = None,
    allow_drift: bool = False,
) -> tuple[Served, Sandbox]:
    """What ``mcp serve`` serves with, composed as ``chat`` composes a session: the
    trust-filtered settings, the gate, chat's sandbox around ``bash``, the built-in tools,
    ``ask`` and the hooks. The caller serves it (``serve_stdio``; the tests over memory
    streams) and closes the sandbox.

    Raises:
        SettingsError: the settings cannot be read.
        UsageError: ``--elicit`` or ``--sandbox`` names no known mode.
    """
    from codebot_mcp.cli.answers import policy
    from codebot_mcp.cli.chat_parts import chat_sandbox, sandbox_mode
    from codebot_mcp.cli.chat_runtime import ChatOptions
    from codebot_mcp.core.agent.permissions import PermissionGate
    from codebot_mcp.core.tools.builtin import builtin_tools
    from codebot_mcp.mcpbridge.serve import AskTool, Served

    raw = load_unfiltered_settings(globals_)  # the hooks review it; trust applied below
    settings, _ = apply_trust(globals_, raw)
    policy(settings, elicit, allow_sampling)  # a bad --elicit is a usage error up front
    options = ChatOptions(
        yes=yes,
        allow=list(allow or []),
        model=globals_.model,
        base_url=globals_.base_url,
        elicit=elicit,
        allow_sampling=list(allow_sampling or []),
    )
    options.sandbox = sandbox_mode(sandbox)
    options.allow_drift = allow_drift  # ask's sessions check their servers against the lock
    session_pins(settings, allow_drift=allow_drift)  # a lock that cannot be read: exit 3 now
    gate = PermissionGate(
        settings.permissions,
        assume_yes=yes,
        allow=options.allow,
        cwd=settings.cwd,  # where `read(./secrets/**)`-style rules start
    )
    confined = chat_sandbox(globals_, settings, options.sandbox)  # chat's: the same bash, confined
    try:
        tools = builtin_tools(globals_.cwd, settings.project_root, sandbox=confined)
        tools.append(AskTool(ChatAsker(globals_, options)))
        served = Served(
            tools,
            gate,
            str(globals_.cwd),
            settings.tool_result_max_tokens,
            hooks=_hooks(globals_, settings, raw, confined, yes=yes),
        )
    except BaseException:
        confined.close()
        raise
    return served, confined


def _hooks(
    globals_: Globals, settings: Settings, raw: Settings, sandbox: Sandbox, *, yes: bool
) -> Hooks | None:
    """Chat's hooks (trust-filtered, confined like ``bash``) for the served calls."""
    from codebot_mcp.cli import extensions

    mode = "bypassPermissions" if yes else "default"
    context = extensions.HookContext(mode_of=lambda: mode)
    found = extensions.read(settings, globals_.cwd)
    subagents = extensions.subagents(settings, globals_.cwd, found)
    return extensions.build(settings, raw, globals_.cwd, found, subagents, context).hooks


class ChatAsker:
    """``ask``: one ``chat -p`` session per call, in this process (``mcpbridge.serve.Asker``)."""

    def __init__(self, globals_: Globals, options: ChatOptions) -> None:
        self.globals = globals_
        self.options = options

    async def __call__(
        self, prompt: str, *, plan: bool, events: AgentEvents, approver: Approver | None
    ) -> AskOutcome:
        """Run the session; a failure after it started comes back in the outcome's run."""
        from dataclasses import replace

        from codebot_mcp.cli.chat_runtime import open_runtime
        from codebot_mcp.core.errors import CodebotError
        from codebot_mcp.mcpbridge.serve import AskOutcome

        options = replace(self.options, prompt=prompt, plan=plan)
        async with open_runtime(self.globals, options, approver, need_model=True) as runtime:
            agent = runtime.agent
            assert agent is not None  # need_model: open_runtime raised otherwise
            await runtime.manager.start_all()
            try:
                run = await agent.run(prompt, events)
            except CodebotError:
                if agent.last is None:
                    raise
                run = agent.last  # what ran before it failed, with the error in it
            session_id = runtime.log.id if runtime.log else None
            return AskOutcome(run, session_id, agent.model.config.model)
