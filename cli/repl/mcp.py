"""The REPL's side of MCP beyond tools: servers' requests, ``@server:uri``, prompt commands.

- :class:`ReplAgent` answers elicitation (field by field, or a URL opened only after a yes),
  sampling (yes, no, or always for this server) and roots.
- :func:`expand_mentions` inserts the resources a prompt names as ``@server:uri``.
- :func:`prompt_messages` runs ``/mcp__server__prompt key=value…``.
- :class:`MCPCompleter` completes slash commands, prompt names and arguments (through
  ``completion/complete`` where the server offers it), servers and resource URIs.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from codebot_mcp.cli import render
from codebot_mcp.cli.render import safe
from codebot_mcp.core.config.settings import root_dirs
from codebot_mcp.core.errors import CodebotError, UsageError
from codebot_mcp.core.tools.arguments import check_prompt_args, parse_prompt_args
from codebot_mcp.core.tools.sources import PromptMessage, content_text
from codebot_mcp.core.tools.useragent import (
    ElicitAnswer,
    ElicitField,
    ElicitRequest,
    SamplingRequest,
    coerce,
)

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime
    from codebot_mcp.cli.repl.chatview import Status
    from codebot_mcp.mcpbridge.connection.manager import Manager


class ReplHost(Protocol):
    """What the REPL's MCP side needs of the REPL (:class:`cli.repl.repl_loop.Repl`): its runtime,
    its status line, a question at its prompt, and a turn."""

    runtime: ChatRuntime | None
    status: Status

    async def ask(self, question: str) -> str:
        """One line typed at a prompt of its own (not into the input history)."""
        ...

    async def turn(self, line: str, *, mentions: bool = True) -> None:
        """One prompt to the agent."""
        ...


class KeyHost(ReplHost, Protocol):
    """A host that also takes one-key answers (the REPL, on a terminal)."""

    async def ask_key(self, question: str, keys: str, enter: str | None = None) -> str:
        """One of ``keys``, pressed without Enter (Esc: "n")."""
        ...


PROMPT_PREFIX = "/mcp__"
MENTION = re.compile(r"(?:^|(?<=\s))@([A-Za-z0-9_-]+):(\S+)")
MAX_MENTIONS = 10
"""Resources one prompt may insert."""
MAX_INSERT_CHARS = 100_000
"""Characters of one inserted resource (about 25k tokens)."""


def _err(text: str) -> None:
    print(text, file=sys.stderr)


class ReplAgent:
    """Asks the user, in the terminal, on behalf of the servers."""

    def __init__(self, repl: KeyHost) -> None:
        self.repl = repl
        self.always_sample: set[str] = set()
        self._lock = anyio.Lock()  # one question at a time, whatever asks concurrently

    async def _ask(self, question: str) -> str:
        return await self.repl.ask(question)

    def roots(self) -> list[Path]:
        """The project root (or working directory) and the ``roots`` setting."""
        runtime = self.repl.runtime
        if runtime is None:
            return []
        settings = runtime.settings
        return root_dirs(settings.project_root, settings.cwd, settings.roots)

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        """Show the server's message, then ask field by field (or about the URL)."""
        async with self._lock:
            self.repl.status.clear()
            head = render.style("?", "33;1", sys.stderr)
            _err(f"{head} server '{safe(request.server)}' asks: {safe(request.message)}")
            try:
                if request.mode == "url":
                    return await self._url(request)
                return await self._form(request)
            except (KeyboardInterrupt, EOFError):
                _err("  (cancelled)")
                return ElicitAnswer("cancel")

    async def _url(self, request: ElicitRequest) -> ElicitAnswer:
        from codebot_mcp.cli.browser import open_in_browser
        from codebot_mcp.cli.repl.elicit_url import describe

        shown = describe(request.url or "")
        _err(f"  it wants you to open: {shown.url}")
        _err(f"  host: {render.style(shown.host, '1', sys.stderr)}")
        for note in shown.notes:
            _err(f"  {render.style('note:', '33', sys.stderr)} {note}")
        if shown.problem is not None:
            _err(f"  (declined: {shown.problem})")
            return ElicitAnswer("decline")
        answer = await self._ask("  open it in your browser? [y]es / [n]o (decline) / [c]ancel: ")
        choice = answer.strip().lower()[:1]
        if choice == "c":
            return ElicitAnswer("cancel")
        if choice != "y":
            return ElicitAnswer("decline")
        if not open_in_browser(shown.target or ""):  # the URL as shown: the host shown
            _err(f"  (no browser could be started; open the URL yourself: {shown.url})")
        return ElicitAnswer("accept")

    async def _form(self, request: ElicitRequest) -> ElicitAnswer:
        if request.fields:
            names = ", ".join(safe(f.title or f.name) for f in request.fields)
            _err(f"  fields: {names}")
        answer = await self._ask("  answer? [y]es / [d]ecline / [c]ancel: ")
        choice = answer.strip().lower()[:1]
        if choice == "c":
            return ElicitAnswer("cancel")
        if choice != "y":
            return ElicitAnswer("decline")
        content: dict[str, Any] = {}
        for field_ in request.fields:
            value = await self._field(field_)
            if value is not None:
                content[field_.name] = value
        return ElicitAnswer("accept", content)

    async def _field(self, field_: ElicitField) -> Any:
        label = safe(field_.title or field_.name)
        kind = f"{'list of ' if field_.multiple else ''}{field_.type}"
        facts = [kind, "required" if field_.required else "optional"]
        if field_.format:
            facts.append(safe(field_.format))
        facts += _limits(field_)
        _err(f"  {render.style(label, '1', sys.stderr)} ({', '.join(facts)})")
        if field_.description:
            _err(f"    {safe(field_.description)}")
        if field_.choices:
            titles = field_.choice_titles or field_.choices
            for i, (value, title) in enumerate(zip(field_.choices, titles, strict=False), 1):
                extra = f" ({safe(title)})" if title != value else ""
                _err(f"    {i}. {safe(value)}{extra}")
        default = f" [{safe(str(field_.default))}]" if field_.has_default else ""
        while True:
            text = (await self._ask(f"    {label}{default}: ")).strip()
            if not text:
                if field_.has_default:
                    return field_.default
                if not field_.required:
                    return None
                _err("    (required)")
                continue
            text = self._by_number(field_, text)
            try:
                return coerce(field_, text)
            except ValueError as exc:
                _err(f"    ({exc})")

    @staticmethod
    def _by_number(field_: ElicitField, text: str) -> str:
        """Choices may be picked by their number (several, comma-separated, for a list)."""
        if not field_.choices:
            return text
        picked = []
        for part in text.split(","):
            part = part.strip()
            if part.isdigit() and 1 <= int(part) <= len(field_.choices):
                picked.append(field_.choices[int(part) - 1])
            else:
                picked.append(part)
        return ",".join(picked)

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        """Which server, a summary of the messages, the token limit; yes, no, or always."""
        if request.server in self.always_sample:
            return True
        async with self._lock:
            self.repl.status.clear()
            head = render.style("?", "33;1", sys.stderr)
            _err(
                f"{head} server '{safe(request.server)}' wants to use the model "
                f"(up to {request.max_tokens} tokens, {len(request.messages)} messages)"
            )
            if request.system_prompt:
                _err(f"  system: {render.first_line(safe(request.system_prompt), 100)}")
            for role, text in request.messages[-5:]:
                _err(f"  {safe(role)}: {render.first_line(safe(text), 100)}")
            try:
                choice = await self.repl.ask_key(
                    f"  allow? [y]es once, [a]lways for '{safe(request.server)}', [n]o: ", "yan"
                )
            except (KeyboardInterrupt, EOFError):
                return False
            if choice == "a":
                self.always_sample.add(request.server)
            return choice in ("y", "a")


def _limits(field_: ElicitField) -> list[str]:
    """The bounds a field's answer must keep, said before it is asked."""
    out: list[str] = []
    for low, high, unit in (
        (field_.minimum, field_.maximum, ""),
        (field_.min_length, field_.max_length, " characters"),
        (field_.min_items, field_.max_items, " choices"),
    ):
        if low is not None and high is not None:
            out.append(f"{low:g} to {high:g}{unit}")
        elif low is not None:
            out.append(f"at least {low:g}{unit}")
        elif high is not None:
            out.append(f"at most {high:g}{unit}")
    return out


# -- @server:uri --------------------------------------------------------------------------


def check_mention(server: str, uri: str, manager: Manager, untrusted: Sequence[str] = ()) -> None:
    """Nothing when ``@server:uri`` names a server that started; else why it cannot be read.

    Raises:
        UsageError: the server is not configured (naming the configured ones), is held back
            by trust (``untrusted``), is disabled, or did not start (with its failure).
    """
    client = manager.clients.get(server)
    if client is not None and (client.failure is None or client in manager.connected()):
        return  # a crashed stdio server with a restart left is restarted by the read
    written = f"@{server}:{uri}"
    quote = f"to send the text as it is, quote it: `{written}`"
    config = manager.servers.get(server)
    if config is None and server in untrusted:
        raise UsageError(
            f"server '{server}' in {written} is defined by this project, which is not trusted",
            hint=f"Run `codebot trust` (or pass --trust-project) to start it, or {quote}.",
        )
    if config is None:
        known = ", ".join(sorted(manager.servers)) or "none"
        raise UsageError(
            f"unknown server '{server}' in {written} (configured: {known})",
            hint=f"/mcp and `codebot mcp list` list them; {quote}.",
        )
    if not config.enabled:
        raise UsageError(
            f"server '{server}' in {written} is disabled",
            hint=f"Enable it (`codebot mcp enable {server}`, then /mcp reload), or {quote}.",
        )
    failure = manager.failures.get(server)
    why = failure.message if failure is not None else "it is not connected"
    raise UsageError(
        f"server '{server}' in {written} did not start: {why}",
        hint=f"/mcp and `codebot mcp doctor` say why; {quote}.",
    )


async def expand_mentions(line: str, manager: Manager, untrusted: Sequence[str] = ()) -> str:
    """The prompt with each ``@server:uri`` resource's contents appended.

    Raises:
        CodebotError: a named server is unknown or not running, or a named resource cannot
            be read (the prompt is not sent).
    """
    mentions = [(m.group(1), m.group(2)) for m in MENTION.finditer(line)]
    if not mentions:
        return line
    for server, uri in mentions:
        check_mention(server, uri, manager, untrusted)
    if len(mentions) > MAX_MENTIONS:
        raise UsageError(f"a prompt may name at most {MAX_MENTIONS} resources")
    blocks: list[str] = [line]
    for server, uri in dict.fromkeys(mentions):
        parts = await manager.read_resource(server, uri)
        text = content_text(parts)
        if len(text) > MAX_INSERT_CHARS:
            text = text[:MAX_INSERT_CHARS] + f"\n[… cut at {MAX_INSERT_CHARS} characters]"
        blocks.append(f'<resource server="{server}" uri="{uri}">\n{text}\n</resource>')
        _err(render.style(f"  (inserted @{server}:{uri}, {len(text)} characters)", "2", sys.stderr))
    return "\n\n".join(blocks)


# -- /mcp__server__prompt -----------------------------------------------------------------


def split_prompt_command(line: str) -> tuple[str, str, list[str]]:
    """(server, prompt, args) of ``/mcp__server__prompt a=1 b="x y"``.

    Raises:
        UsageError: the command or its arguments cannot be parsed.
    """
    head, _, rest = line.strip().partition(" ")
    server, sep, prompt = head[len(PROMPT_PREFIX) :].partition("__")
    if not sep or not server or not prompt:
        raise UsageError(
            f"{head}: not a prompt command", hint="Write /mcp__SERVER__PROMPT key=value…"
        )
    try:
        args = shlex.split(rest)
    except ValueError as exc:
        raise UsageError(f"{head}: {exc}", hint='Quote values with spaces: key="a b".') from None
    return server, prompt, args


async def prompt_messages(line: str, manager: Manager) -> list[PromptMessage]:
    """Run a prompt command: check its arguments against the listing, then render it.

    Raises:
        CodebotError: unknown server or prompt, bad arguments, or the server failed.
    """
    server, name, args = split_prompt_command(line)
    arguments = parse_prompt_args(args)
    prompts = {p.name: p for p in await manager.prompts(server)}
    if name not in prompts:
        raise UsageError(
            f"server '{server}' has no prompt '{name}'",
            hint=f"Type {PROMPT_PREFIX}{server}__ and Tab to see them.",
        )
    check_prompt_args(prompts[name], arguments)
    return await manager.get_prompt(server, name, arguments)


def show_messages(messages: list[PromptMessage]) -> None:
    """The rendered prompt, dimmed, before it goes into the conversation."""
    for message in messages:
        head = render.style(f"{message.role}:", "2;1", sys.stderr)
        body = render.style(render.first_line(safe(message.text), 200), "2", sys.stderr)
        _err(f"  {head} {body}")


def progress_hook(status: Status) -> Callable[[str, float, float | None, str | None], None]:
    """Shows a running call's progress notifications in the spinner line."""

    def show(server: str, value: float, total: float | None, message: str | None) -> None:
        percent = f" {min(value / total, 1.0):.0%}" if total else ""
        note = f" {render.first_line(safe(message), 50)}" if message else ""
        status.set(f"{server}:{percent}{note}")

    return show


async def run_prompt_command(repl: ReplHost, line: str) -> None:
    """``/mcp__server__prompt args``: its messages go into the conversation, and a final user
    message is answered (as a turn that reads no ``@`` mentions: a server's text reads nothing).
    """
    runtime = repl.runtime
    assert runtime is not None
    try:
        messages = await prompt_messages(line, runtime.manager)
    except CodebotError as exc:
        render.error(exc)
        return
    show_messages(messages)
    if not messages:
        _err("(the prompt has no messages)")
        return
    last = messages[-1]
    history = runtime.session.history
    earlier = messages[:-1] if last.role == "user" else messages
    history.extend({"role": m.role, "content": m.text} for m in earlier)
    if last.role == "user" and runtime.agent is not None:
        await repl.turn(last.text, mentions=False)
    elif last.role == "user":
        history.append({"role": "user", "content": last.text})
        if runtime.model_error is not None:
            render.error(runtime.model_error)
    else:
        _err("(prompt added to the conversation)")
