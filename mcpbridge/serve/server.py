"""``codebot mcp serve``: codebot's own tools as an MCP server over stdio (the SDK's lowlevel
``Server``, both protocol eras: the ``initialize`` handshake and 2026-07-28 requests).

Every call goes the way a call of the model goes in ``chat``: the ``PreToolUse`` hooks, the
permission gate (rules, ``--yes``, ``--allow``, the project-root boundary, the sandbox), the
tool, then the ``PostToolUse`` hooks; a call that would ask is asked of the client
(:mod:`.approval`). Results are scrubbed of every known secret and cut to
``tool_result_max_tokens``, as the agent loop does.

``bash`` and ``ask`` report progress while they run (elapsed time; each step of the session),
and a client's cancellation ends them: the SDK cancels the call's task, ``bash`` kills its
process group, ``ask`` unwinds its session and stops its servers.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from codebot_mcp.core import __version__, gcpause
from codebot_mcp.core.agent.events import AgentEvents
from codebot_mcp.core.agent.permissions import Decision, PermissionGate, Verdict, denial_text
from codebot_mcp.core.agent.toolcalls import truncate
from codebot_mcp.core.hooks import points as hook_points
from codebot_mcp.core.hooks.runner import HookBlockedError, Hooks
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.secrets.redact import SECRETS, printable
from codebot_mcp.core.tools.base import Tool, ToolResult
from codebot_mcp.mcpbridge.serve.approval import (
    Asking,
    CannotAskError,
    ElicitingApprover,
    NeedsAnswerError,
    asking,
    elicitation_declared,
    refusal_text,
)
from codebot_mcp.mcpbridge.serve.ask import AskTool
from codebot_mcp.mcpbridge.serve.served_tools import HINTS, definition, ordered

logger = logging.getLogger(__name__)

SERVER_NAME = "codebot"
PROGRESS_SECONDS = 1.0
"""How often a running ``bash`` reports progress (its elapsed time)."""
MAX_PROGRESS_MESSAGE = 200
INSTRUCTIONS = (
    "codebot's own tools, working in {cwd}: read, edit, write, glob and grep files, run bash "
    "commands, and ask (a whole codebot agent session). Calls that change files or run "
    "commands need approval: codebot asks you (elicitation) when your client supports it, "
    "and refuses them otherwise unless the server was started with --yes or --allow."
)


@dataclass
class Served:
    """What one ``mcp serve`` process serves with."""

    tools: Sequence[Tool]
    gate: PermissionGate
    cwd: str
    tool_result_max_tokens: int = 25_000
    hooks: Hooks | None = None
    """The user's ``PreToolUse``/``PostToolUse`` hooks (chat's; None: none configured)."""


def build_server(served: Served) -> Server[Any]:
    """The SDK server: ``tools/list`` and ``tools/call`` over :class:`Served`."""
    tools = {t.name: t for t in ordered(served.tools)}
    listing = types.ListToolsResult(tools=[definition(t) for t in tools.values()])
    served.gate.approver = ElicitingApprover()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        tool = tools.get(params.name)
        if tool is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool '{params.name}' (codebot serves {', '.join(tools)})",
            )
        with asking(_asking(ctx)):
            return await _call(served, tool, dict(params.arguments or {}), ctx)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        title="codebot",
        instructions=INSTRUCTIONS.format(cwd=served.cwd),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # 2026-07-28 approvals ride requestState (SEP-2322): sealed with a key of this process,
    # bound to the request, so a client cannot forge or replay one.
    security = RequestStateSecurity.ephemeral()
    server.middleware.append(RequestStateBoundary(security, default_audience=SERVER_NAME))
    return server


async def serve_stdio(served: Served) -> None:
    """Serve on stdin/stdout until the client closes stdin (the SDK diverts fd 0 and 1
    meanwhile: nothing else can read the client's requests or write into the protocol)."""
    from mcp.server.stdio import stdio_server

    server = build_server(served)
    gcpause.release()  # built: it serves from here on (core.gcpause)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _asking(ctx: ServerRequestContext[Any]) -> Asking:
    """How this request's client can be asked (see :mod:`.approval`)."""
    session = ctx.session
    if not elicitation_declared(session.client_capabilities):
        return Asking("none")
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        params = ctx.params or {}
        responses = params.get("inputResponses")
        state = params.get("requestState")
        return Asking(
            "input_required",
            responses=responses if isinstance(responses, dict) else {},
            state=state if isinstance(state, str) else None,
        )
    return Asking("elicit", session=session, request_id=ctx.request_id)


async def _decide(
    served: Served, tool: Tool, arguments: dict[str, Any], call: ToolCall
) -> Decision:
    """The hooks' and the gate's decision; ``ask`` is asked about only through its session's
    own calls.

    Raises:
        HookBlockedError: a ``PreToolUse`` hook stopped everything.
    """
    if isinstance(tool, AskTool):
        # The session ask runs puts each of its calls through chat's gate (asking the client
        # where a call needs it); asking about the session as a whole too would ask twice.
        # A deny rule on "ask" still stops it.
        decision = served.gate.evaluate(tool)
        if decision.verdict is Verdict.DENY:
            return decision
        return Decision(Verdict.ALLOW, "each call of its session goes through the gate")
    hook = await hook_points.before_call(served.hooks, call, tool, arguments, _HOOK_EVENTS)
    if hook is not None and hook.updated is not None:  # a hook's updatedInput: run that
        arguments.clear()
        arguments.update(hook.updated)
    return await served.gate.check(tool, arguments, hook)


async def _call(
    served: Served, tool: Tool, arguments: dict[str, Any], ctx: ServerRequestContext[Any]
) -> types.CallToolResult | types.InputRequiredResult:
    call = ToolCall(f"mcp-serve-{ctx.request_id}", tool.name, json.dumps(arguments))
    try:
        decision = await _decide(served, tool, arguments, call)
    except HookBlockedError as exc:
        return _error(f"codebot did not run '{tool.name}': {exc.message}")
    except NeedsAnswerError as needs:
        return ElicitingApprover.question(needs)
    except CannotAskError as exc:
        why = "this MCP client declared no elicitation, so it cannot be asked"
        return _error(refusal_text(exc.request, why=why))
    except MCPError as exc:  # the client failed the elicitation request itself
        return _error(f"codebot could not ask about '{tool.name}': {exc.message}")
    if not decision.allowed:
        return _error(denial_text(tool.name, decision))
    if HINTS[tool.name].long_running:
        result = await _long_running(tool, arguments, ctx)
    else:
        result = await tool.execute(arguments)
    if not isinstance(tool, AskTool):  # its session ran the hooks around its own calls
        result = await hook_points.after_call(
            served.hooks, call, tool, arguments, result, _HOOK_EVENTS
        )
    text = truncate(SECRETS(result.text), served.tool_result_max_tokens)
    structured = result.data.get("structuredContent")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured if isinstance(structured, dict) else None,
        is_error=result.is_error,
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def _long_running(
    tool: Tool, arguments: dict[str, Any], ctx: ServerRequestContext[Any]
) -> ToolResult:
    """Run ``bash`` or ``ask`` with progress notifications (when the client asked for them)."""
    send, receive = anyio.create_memory_object_stream[str](max_buffer_size=100)
    result: list[ToolResult] = []

    async def report() -> None:
        step = 0
        async with receive:
            async for message in receive:
                step += 1
                try:
                    await ctx.session.report_progress(step, None, message[:MAX_PROGRESS_MESSAGE])
                except Exception as exc:  # boundary: progress is a courtesy, the call goes on
                    logger.debug("progress not sent: %s", exc)

    async def run() -> None:
        async with send:
            if isinstance(tool, AskTool):
                how = _nested_approver()
                result.append(await tool.run(arguments, _AskProgress(send), how))
            else:
                result.append(await _with_ticker(tool, arguments, send))

    async with anyio.create_task_group() as tg:
        tg.start_soon(report)
        await run()
    return result[0]


def _nested_approver() -> ElicitingApprover | None:
    """``ask``'s session asks the client mid-run only where that is possible (handshake-era
    elicitation); otherwise its calls that need approval are denied with the reason."""
    from codebot_mcp.mcpbridge.serve.approval import current

    return ElicitingApprover() if current().interactive else None


async def _with_ticker(
    tool: Tool, arguments: dict[str, Any], send: MemoryObjectSendStream[str]
) -> ToolResult:
    """``tool.execute`` while a ticker reports the elapsed seconds."""
    started = time.monotonic()
    out: list[ToolResult] = []

    async def tick() -> None:
        while True:
            await anyio.sleep(PROGRESS_SECONDS)
            elapsed = time.monotonic() - started
            _offer(send, f"{tool.name}: running for {elapsed:.0f} s")

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        out.append(await tool.execute(arguments))
        tg.cancel_scope.cancel()
    return out[0]


def _offer(send: MemoryObjectSendStream[str], message: str) -> None:
    try:
        send.send_nowait(message)
    except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # a slow client misses a progress line, never the call


class _HookNotices(AgentEvents):
    """What hooks say to the user (a warning, a system message) goes to the server's stderr,
    which the MCP client keeps as the server's log."""

    def notice(self, text: str) -> None:
        sys.stderr.write(f"codebot mcp serve: {printable(SECRETS(text), one_line=True)}\n")
        sys.stderr.flush()


_HOOK_EVENTS = _HookNotices()


class _AskProgress(AgentEvents):
    """The steps of ``ask``'s session, as progress messages."""

    def __init__(self, send: MemoryObjectSendStream[str]) -> None:
        self.send = send

    def model_started(self, turn: int) -> None:
        _offer(self.send, f"ask: turn {turn}: waiting for the model")

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        _offer(self.send, f"ask: running {call.name} {SECRETS(call.arguments)}")

    def tool_denied(self, call: ToolCall, decision: Any) -> None:
        _offer(self.send, f"ask: {call.name} was denied ({decision.reason})")

    def compacted(self, compaction: Any) -> None:
        _offer(self.send, "ask: the conversation was compacted")
