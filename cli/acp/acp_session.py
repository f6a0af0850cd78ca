"""One ACP session: the chat runtime held open in its own task, its turns and their
cancellation, its mode, and the approvals it sends to the editor.

The runtime is :func:`cli.chat_runtime.open_runtime`, the same the REPL and ``chat -p`` use
(trust, managed settings, the sandbox, permission rules, hooks, the saved session), entered
and left in one long-lived task (anyio requires it) that the agent's task group owns. The
session's id is codebot's saved-session id, so ``session/load`` finds it again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from acp import RequestError, helpers
from acp.schema import PermissionOption, SessionMode, SessionModeState, ToolCallUpdate

from codebot_mcp.cli import render
from codebot_mcp.cli.acp.acp_updates import Outbox, UpdateView, replay_updates, tool_title
from codebot_mcp.cli.acp.bridge import EditorFiles, EditorTerminals
from codebot_mcp.core.agent.permissions import Answer, ApprovalRequest
from codebot_mcp.core.errors import CodebotError, TurnLimitError
from codebot_mcp.core.media import imagelimits, images
from codebot_mcp.core.media.images import Image

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_parts import EditorTools
    from codebot_mcp.cli.chat_runtime import ChatOptions, ChatRuntime
    from codebot_mcp.cli.runtime import Globals
    from codebot_mcp.core.config.servers import ServerConfig

MODES = (
    SessionMode(
        id="default",
        name="Default",
        description="Ask before edits, commands outside the sandbox and unknown tools.",
    ),
    SessionMode(
        id="acceptEdits",
        name="Accept edits",
        description="Edits of files inside the project are made without asking.",
    ),
    SessionMode(
        id="plan",
        name="Plan",
        description="Read and plan only: no edits, no commands (codebot's plan mode).",
    ),
)
"""ACP's session modes, named as Claude Code names its permission modes (which codebot's
hooks already receive as ``permission_mode``)."""
APPROVAL_TIMEOUT_SECONDS = 3600.0
"""An approval the editor leaves unanswered this long is a denial."""
OPEN_TIMEOUT_SECONDS = 120.0
"""Building a session (settings, the model's endpoint) may take this long; the servers then
connect in the background, each within its own handshake timeout."""
PERMISSION_OPTIONS = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
)
_log = logging.getLogger("codebot_mcp.acp")


def mode_state(current: str) -> SessionModeState:
    """The modes and the current one, for ``session/new`` and ``session/load``."""
    return SessionModeState(current_mode_id=current, available_modes=list(MODES))


def request_error(exc: CodebotError) -> RequestError:
    """A codebot error as a JSON-RPC error: its message and hint, and the exit code ``chat``
    would end with (``data.exitCode``)."""
    message = str(exc) + (f" ({exc.hint})" if exc.hint else "")
    return RequestError(-32603, render.REDACTOR(message), {"exitCode": int(exc.exit_code)})


@dataclass
class Capabilities:
    """What the client offered in ``initialize``."""

    read: bool = False
    write: bool = False
    terminal: bool = False


@dataclass
class AcpSession:
    """One session; :meth:`open` builds it, :meth:`close` ends it."""

    conn: Any
    globals: Globals
    options: ChatOptions
    servers: dict[str, ServerConfig] = field(default_factory=dict[str, "ServerConfig"])
    client: Capabilities = field(default_factory=Capabilities)
    runtime: ChatRuntime | None = None
    session_id: str = ""
    mode: str = "default"
    files: EditorFiles | None = None
    terminals: EditorTerminals | None = None
    view: UpdateView | None = None
    outbox: Outbox | None = None
    _ready: anyio.Event = field(default_factory=anyio.Event)
    _started: anyio.Event = field(default_factory=anyio.Event)
    _stop: anyio.Event = field(default_factory=anyio.Event)
    _closed: anyio.Event = field(default_factory=anyio.Event)
    _error: BaseException | None = None
    _turn: anyio.CancelScope | None = None
    _lock: anyio.Lock = field(default_factory=anyio.Lock)
    _trust_asked: bool = False

    async def open(self, tg: Any) -> None:
        """Build the runtime in a task of ``tg``; return once it is built (servers connect
        in the background). Raises the ``RequestError`` that says why it could not."""
        tg.start_soon(self._life)
        with anyio.move_on_after(OPEN_TIMEOUT_SECONDS):
            await self._ready.wait()
        if not self._ready.is_set():
            self._stop.set()
            raise RequestError(-32603, f"the session took over {OPEN_TIMEOUT_SECONDS:g} s to start")
        if self._error is not None:
            error = self._error
            while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
                error = error.exceptions[0]  # a task group's wrapping of the one real error
            if isinstance(error, CodebotError):
                raise request_error(error)
            raise RequestError(
                -32603, f"the session could not start: {type(error).__name__}: {error}"
            )

    async def _life(self) -> None:
        from codebot_mcp.cli.chat_runtime import open_runtime

        try:
            async with open_runtime(
                self.globals,
                self.options,
                self._approve,
                need_model=True,
                extra_servers=self.servers,
                mode_of=lambda: self.mode,  # the session's mode, as the editor set it
                editor=self._editor,
            ) as runtime:
                self.runtime = runtime
                self.session_id = runtime.log.id
                self.outbox = Outbox(self._send)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self.outbox.run)
                    tg.start_soon(self._start_servers, runtime)
                    self._ready.set()
                    await self._stop.wait()
                    await self.outbox.drain(seconds=2.0)
                    self.outbox.close()
                    tg.cancel_scope.cancel()
        except Exception as exc:  # boundary: said to the client as session/new's error
            self._error = exc
            _log.debug("session failed", exc_info=True)
        finally:
            self._ready.set()
            self._started.set()
            self._closed.set()

    async def _start_servers(self, runtime: ChatRuntime) -> None:
        """Connect every server (in parallel, each within its handshake timeout)."""
        from codebot_mcp.cli.repl.chatview import report_mcp

        try:
            await runtime.manager.start_all()
            report_mcp(runtime.manager)  # failures named on stderr (the editor's log)
            for line in await runtime.resume_tasks():
                _log.info("%s", line)
        finally:
            self._started.set()

    def _editor(self, session_id: str) -> EditorTools:
        """What the editor lends the tools of session ``session_id``: its ``fs`` to
        ``read``, ``edit`` and ``write``, and its terminals to ``bash``'s foreground calls
        (confined as in ``chat``: the argv is the exec helper's), when it offers them."""
        from codebot_mcp.cli.chat_parts import EditorTools

        if self.client.read or self.client.write:
            self.files = EditorFiles(
                self.conn, session_id, read=self.client.read, write=self.client.write
            )
        if self.client.terminal:
            self.terminals = EditorTerminals(self.conn, session_id, self._terminal_shown)
        return EditorTools(self.files, self.terminals)

    def _terminal_shown(self, terminal_id: str) -> None:
        if self.view is not None:
            self.view.terminal_started(terminal_id)

    async def _send(self, update: Any) -> None:
        await self.conn.session_update(session_id=self.session_id, update=update)

    async def close(self) -> None:
        """End the session: a running turn is cancelled, the servers stopped."""
        self.cancel()
        self._stop.set()
        with anyio.move_on_after(30):
            await self._closed.wait()

    # -- turns -----------------------------------------------------------------------------

    def cancel(self) -> None:
        """``session/cancel``: the running turn stops (the model's stream, running tools,
        a pending approval); its ``session/prompt`` answers ``cancelled``."""
        if self._turn is not None:
            self._turn.cancel()

    async def prompt(self, text: str, attached: Sequence[tuple[str, bytes]] = ()) -> str:
        """Run one turn (``attached``: the prompt's images, as name and bytes); the stop
        reason."""
        from codebot_mcp.cli import extensions
        from codebot_mcp.cli.repl.mcp import expand_mentions
        from codebot_mcp.core.agent.events import Outcome

        runtime, outbox = self.runtime, self.outbox
        if runtime is None or outbox is None or runtime.agent is None:
            raise RequestError(-32603, "the session is closed")
        cap = imagelimits.of(runtime.settings).max_bytes
        pictures = await anyio.to_thread.run_sync(_images, attached, cap)  # may downscale
        async with self._lock:  # one turn at a time
            await self._started.wait()  # bounded: each server's handshake timeout
            agent = runtime.agent
            self.view = view = UpdateView(
                outbox,
                runtime.session.find_tool,
                runtime.globals.cwd,
                self.files.last_edit if self.files is not None else None,
            )
            stop = "end_turn"
            failure: CodebotError | None = None
            with anyio.CancelScope() as scope:
                self._turn = scope
                try:
                    await self._settle_trust()  # the first prompt only; cancel ends it too
                    found = extensions.command_for(runtime.ext, text)
                    command, line = (found[0], found[1]) if found else (None, text)
                    async with extensions.running(runtime.ext, agent, command, line) as line:
                        line = await expand_mentions(line, runtime.manager, runtime.untrusted)
                        result = await agent.run(line, view, pictures)
                    if result.outcome is Outcome.INTERRUPTED:
                        stop = "cancelled"
                    elif result.finish_reason == "length":
                        stop = "max_tokens"
                except TurnLimitError:
                    stop = "max_turn_requests"
                except CodebotError as exc:
                    failure = exc
                finally:
                    self._turn = None
            if scope.cancelled_caught:
                stop = "cancelled"
            self.view = None
            view.close_open(
                "not run to its end: the turn was "
                + ("cancelled" if stop == "cancelled" else "stopped")
            )
            await outbox.drain()
            if failure is not None:
                raise request_error(failure)
            return stop

    # -- trust ------------------------------------------------------------------------------

    async def _settle_trust(self) -> None:
        """The session's first prompt, in a project whose own servers were skipped for want
        of trust, asks the editor once, as the REPL asks at start
        (``session/new`` cannot: the client does not know the session yet). Trusting records
        it (as ``codebot trust`` does) and starts them, as ``/mcp reload`` would."""
        runtime = self.runtime
        if self._trust_asked or runtime is None or not runtime.untrusted:
            return
        self._trust_asked = True
        from codebot_mcp.cli.chat_parts import settle_trust
        from codebot_mcp.cli.repl.chatview import report_mcp
        from codebot_mcp.cli.runtime import load_unfiltered_settings
        from codebot_mcp.core.errors import ModelError

        try:
            raw = load_unfiltered_settings(runtime.globals)
        except CodebotError as exc:
            _log.info("trust: settings not read again: %s", exc)
            return
        if self.servers:
            raw = replace(raw, servers={**raw.servers, **self.servers})
        settings, untrusted = await settle_trust(runtime.globals, raw, self._ask_trust)
        if untrusted:
            return
        await runtime.reload(settings, raw, ())
        report_mcp(runtime.manager)
        try:
            await runtime.apply(settings)
        except ModelError as exc:
            _log.info("trust: the model of the trusted settings does not resolve: %s", exc)

    async def _ask_trust(self, check: Any) -> bool:
        """The trust question as ``session/request_permission``: what the project would run."""
        from codebot_mcp.cli.trustview import describe_all

        what = "\n".join(describe_all(check))
        where = check.project_file or check.root
        text = render.REDACTOR(
            f"{where} would start or set (codebot trust):\n{what}\n\n"
            "Trust records it for these files as they are now; a change asks again."
        )
        call_id = f"trust-{self.session_id}"
        title = f"Trust the project {check.root}?"
        options = [
            PermissionOption(option_id="trust", name="Trust the project", kind="allow_always"),
            PermissionOption(option_id="skip", name="Not now", kind="reject_once"),
        ]
        update = ToolCallUpdate(
            tool_call_id=call_id,
            title=title,
            kind="other",
            status="pending",
            content=[helpers.tool_content(helpers.text_block(text))],
        )
        if self.outbox is not None:
            self.outbox.put(helpers.start_tool_call(call_id, title, kind="other", status="pending"))
            await self.outbox.drain()
        trusted = False
        with anyio.move_on_after(APPROVAL_TIMEOUT_SECONDS):
            response = await self.conn.request_permission(
                session_id=self.session_id, tool_call=update, options=options
            )
            outcome = response.outcome
            trusted = (
                getattr(outcome, "outcome", None) == "selected" and outcome.option_id == "trust"
            )
        if self.outbox is not None:
            status = "completed" if trusted else "failed"
            said = "trusted" if trusted else "not trusted: the project's servers stay off"
            self.outbox.put(
                helpers.update_tool_call(
                    call_id,
                    status=status,  # type: ignore[arg-type]
                    content=[helpers.tool_content(helpers.text_block(said))],
                )
            )
        return trusted

    # -- modes ------------------------------------------------------------------------------

    def set_mode(self, mode_id: str) -> None:
        """``session/set_mode``: default, acceptEdits or plan."""
        if mode_id not in {m.id for m in MODES}:
            known = ", ".join(m.id for m in MODES)
            raise RequestError.invalid_params(
                {"message": f"unknown mode '{mode_id}' (modes: {known})"}
            )
        runtime = self.runtime
        if runtime is None:
            raise RequestError(-32603, "the session is closed")
        self.mode = mode_id
        runtime.gate.accept_edits = mode_id == "acceptEdits"
        if runtime.session.plan_mode != (mode_id == "plan"):
            runtime.session.set_plan_mode(mode_id == "plan")
        if self.outbox is not None:
            self.outbox.put(helpers.update_current_mode(mode_id))

    def announce_commands(self) -> None:
        """``available_commands_update``: the custom commands (``.codebot/commands/``, the
        Claude Code layer's, plugins'), which a prompt ``/name args`` runs as in ``chat``."""
        from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

        runtime = self.runtime
        if runtime is None or runtime.ext is None or self.outbox is None:
            return
        commands = [
            AvailableCommand(
                name=c.name,
                description=render.first_line(c.description, 200) or c.name,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=c.argument_hint))
                if c.argument_hint
                else None,
            )
            for c in runtime.ext.commands.commands.values()
        ]
        if commands:
            self.outbox.put(helpers.update_available_commands(commands))

    # -- approvals and replay -----------------------------------------------------------------

    async def _approve(self, request: ApprovalRequest) -> Answer:
        """An approval as ``session/request_permission`` about the call the editor shows."""
        from codebot_mcp.core.model.stream import ToolCall

        view = self.view
        call = view.pick(request.tool, request.arguments) if view is not None else None
        if call is None:
            import json

            call = ToolCall(
                f"approval-{id(request)}", request.tool, json.dumps(dict(request.arguments))
            )
        lines = [f"{request.permission.capability.value}: {request.reason}"]
        for extra in (request.detail, request.sandbox, request.preview):
            if extra:
                lines.append(extra)
        text = render.REDACTOR("\n".join(lines))
        tool = self.runtime.session.find_tool(call.name) if self.runtime else None
        update = ToolCallUpdate(
            tool_call_id=call.id,
            title=tool_title(call, tool, request.arguments),
            status="pending",
            content=[helpers.tool_content(helpers.text_block(text))],
        )
        if self.outbox is not None:
            await self.outbox.drain()  # the tool_call is shown before the question
        with anyio.move_on_after(APPROVAL_TIMEOUT_SECONDS):
            response = await self.conn.request_permission(
                session_id=self.session_id, tool_call=update, options=list(PERMISSION_OPTIONS)
            )
            outcome = response.outcome
            if getattr(outcome, "outcome", None) == "selected":
                return {"allow_once": Answer.ONCE, "allow_always": Answer.ALWAYS}.get(
                    outcome.option_id, Answer.NO
                )
        return Answer.NO

    async def replay(self) -> None:
        """``session/load``: the saved conversation, as updates, before the response."""
        if self.runtime is None or self.outbox is None:
            return
        for update in replay_updates(self.runtime.session.history):
            self.outbox.put(update)
        self.announce_commands()
        await self.outbox.drain(seconds=30.0)


def session_options(base: ChatOptions, resume: str | None) -> ChatOptions:
    """The chat options of one session (``--resume ID`` for ``session/load``)."""
    return replace(base, resume=resume, output_format="text")


def session_globals(base: Globals, cwd: str) -> Globals:
    """The command's globals with the client's ``cwd`` (absolute, an existing directory)."""
    path = Path(cwd)
    if not path.is_absolute() or not path.is_dir():
        raise RequestError.invalid_params(
            {"message": f"cwd {cwd!r} must be an absolute path to an existing directory"}
        )
    return replace(base, cwd=path.resolve())


def _images(attached: Sequence[tuple[str, bytes]], max_bytes: int) -> tuple[Image, ...]:
    """The prompt's images, each checked by its content and fitted under ``max_bytes``; one
    that is not an image, or cannot be made small enough, is the prompt's error."""
    out: list[Image] = []
    for name, data in attached:
        try:
            out.append(images.from_bytes(data, name, max_bytes))
        except images.ImageError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from exc
    return tuple(out)
