"""What an ACP client lends a session: its ``mcpServers`` (as codebot server entries, which
then meet trust, the managed policy and the lock like the settings' own) and its ``fs``
methods (as :class:`~codebot_mcp.core.tools.builtin._files.TextFiles`, so ``read``, ``edit``
and ``write`` see the editor's unsaved buffers) and its ``terminal/*`` methods (as
:class:`~codebot_mcp.core.tools.builtin.bash.Terminals`, so ``bash`` runs where the editor
shows it, still confined)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.servers import ServerConfig, parse_server
from codebot_mcp.core.tools.builtin.bash import TerminalRun

CLIENT_SOURCE = Path("<ACP client mcpServers>")
"""The ``source`` of a server the client supplied: named in messages; no settings file."""
EDITOR_TIMEOUT_SECONDS = 30.0
"""An ``fs/*`` or ``terminal/*`` request the editor leaves unanswered this long fails the
tool call."""
REMEMBERED_FILES = 64
"""Texts kept per session for diffs (the last files read and written), oldest dropped."""
KILL_SECONDS = 5.0
"""``terminal/kill`` and ``terminal/release`` after a cancel or a timeout wait this long."""


def client_servers(entries: Sequence[Any] | None, cwd: Path) -> dict[str, ServerConfig]:
    """The ``mcpServers`` of ``session/new`` (stdio entries, ``http`` ones) as server entries.

    ``sse`` entries are parsed too and fail as the settings' would (codebot speaks Streamable
    HTTP; ``initialize`` says ``sse: false``). Problems stay on the entry (``error``), so one
    bad server never fails the session.
    """
    servers: dict[str, ServerConfig] = {}
    for item in entries or ():
        data = item.model_dump(by_alias=True, exclude_none=True)
        name = str(data.get("name", ""))
        entry: dict[str, Any]
        if "command" in data:
            entry = {
                "command": data["command"],
                "args": list(data.get("args") or []),
                "env": {e["name"]: e["value"] for e in data.get("env") or []},
            }
        else:
            entry = {
                "type": data.get("type", "http"),
                "url": data.get("url", ""),
                "headers": {h["name"]: h["value"] for h in data.get("headers") or []},
            }
        servers[name] = parse_server(name, entry, CLIENT_SOURCE, os.environ, cwd)
    return servers


class EditorFiles:
    """The client's ``fs/read_text_file`` and ``fs/write_text_file`` for one session; each
    side only when the client offers it (else the disk, as in ``chat``)."""

    def __init__(self, conn: Any, session_id: str, *, read: bool, write: bool) -> None:
        self.conn = conn
        self.session_id = session_id
        self.can_read = read
        self.can_write = write
        self.reads = 0
        self.writes = 0
        self._seen: dict[str, str] = {}  # path → the text last read, for diffs
        self.written: dict[str, tuple[str | None, str]] = {}
        """path → (text before, text after) of the last write through the editor."""

    def last_edit(self, path: str) -> tuple[str | None, str] | None:
        """The (old, new) text of the last write to ``path`` (for the call's diff)."""
        return self.written.get(path)

    async def read_text(self, path: Path) -> str:
        """The editor's text of ``path`` (its buffer when open); the disk when the client
        does not read files."""
        if not self.can_read:
            return _disk_text(path)
        response = await ask_editor(
            "read it", self.conn.read_text_file, session_id=self.session_id, path=str(path)
        )
        self.reads += 1
        self._seen[str(path)] = str(response.content)
        _trim(self._seen)
        return str(response.content)

    async def write_text(self, path: Path, text: str) -> None:
        """Write through the editor (it updates the buffer and the file)."""
        old = self._seen.pop(str(path), None)
        if old is None and self.can_read:  # write over a file: the diff needs its text
            try:
                old = await self.read_text(path)
            except OSError:
                old = None
            self._seen.pop(str(path), None)
        self.written[str(path)] = (old, text)
        _trim(self.written)
        if not self.can_write:
            from codebot_mcp.core.fsutil import atomic_write

            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text)
            return
        await ask_editor(
            "write it",
            self.conn.write_text_file,
            session_id=self.session_id,
            path=str(path),
            content=text,
        )
        self.writes += 1


class EditorTerminals:
    """The client's ``terminal/*`` methods for one session: ``bash`` runs a foreground call
    there (``terminal/create``, ``wait_for_exit``, ``output``, ``kill`` on a timeout or a
    cancel, ``release``). ``shown(terminal_id)`` puts the terminal into the running call's
    content, so the editor shows its output live."""

    def __init__(self, conn: Any, session_id: str, shown: Callable[[str], None]) -> None:
        self.conn = conn
        self.session_id = session_id
        self.shown = shown
        self.created = 0

    async def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        limit: float,
        output_limit: int,
    ) -> TerminalRun:
        """Run ``argv`` in a new terminal of the editor (see :class:`Terminals`).

        ``env`` is sent whole, and every variable of codebot's own environment that it
        leaves out is sent empty: an editor adds ``env`` to its own environment (which
        codebot's came from), so a credential the minimal environment dropped stays out.
        """
        import anyio

        created = await self._call(
            "create a terminal",
            self.conn.create_terminal,
            command=argv[0],
            args=argv[1:],
            env=_env_list(env),
            cwd=str(cwd),
            output_byte_limit=output_limit,
        )
        terminal_id = str(created.terminal_id)
        self.created += 1
        self.shown(terminal_id)
        try:
            with anyio.move_on_after(limit) as waited:
                await self.conn.wait_for_terminal_exit(
                    session_id=self.session_id, terminal_id=terminal_id
                )
            if waited.cancelled_caught:
                await self._kill(terminal_id)
            out = await self._call(
                "return the output", self.conn.terminal_output, terminal_id=terminal_id
            )
        except BaseException:  # a cancel (or a failing editor): the command must not go on
            await self._kill(terminal_id)
            raise
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(KILL_SECONDS):
                await self._quietly(self.conn.release_terminal, terminal_id)
        status = out.exit_status
        return TerminalRun(
            terminal_id,
            str(out.output),
            bool(out.truncated),
            status.exit_code if status is not None else None,
            status.signal if status is not None else None,
            waited.cancelled_caught,
        )

    async def _call(self, what: str, method: Callable[..., Any], **kwargs: Any) -> Any:
        """One ``terminal/*`` request (:func:`ask_editor`)."""
        return await ask_editor(what, method, session_id=self.session_id, **kwargs)

    async def _kill(self, terminal_id: str) -> None:
        import anyio

        with anyio.CancelScope(shield=True), anyio.move_on_after(KILL_SECONDS):
            await self._quietly(self.conn.kill_terminal, terminal_id)

    async def _quietly(self, method: Callable[..., Any], terminal_id: str) -> None:
        """``kill`` or ``release``: an editor that fails them is not the call's problem."""
        from acp import RequestError

        try:
            await method(session_id=self.session_id, terminal_id=terminal_id)
        except (RequestError, OSError):
            pass


async def ask_editor(what: str, method: Callable[..., Any], **kwargs: Any) -> Any:
    """One request to the editor, bounded by :data:`EDITOR_TIMEOUT_SECONDS`; a refusal or
    silence is an ``OSError`` saying what it could not do (the tools' message for the model)."""
    import anyio
    from acp import RequestError

    try:
        with anyio.fail_after(EDITOR_TIMEOUT_SECONDS):
            return await method(**kwargs)
    except TimeoutError:
        raise OSError(f"the editor did not {what} within {EDITOR_TIMEOUT_SECONDS:g} s") from None
    except RequestError as exc:
        raise OSError(f"the editor could not {what}: {exc}") from None


def _env_list(env: Mapping[str, str]) -> list[Any]:
    """``env`` as ACP's ``EnvVariable`` list, with codebot's other variables emptied."""
    from acp.schema import EnvVariable

    names = {**dict.fromkeys(os.environ, ""), **env}
    return [EnvVariable(name=name, value=value) for name, value in names.items()]


def _trim(texts: dict[str, Any]) -> None:
    """Keep the last :data:`REMEMBERED_FILES` entries."""
    while len(texts) > REMEMBERED_FILES:
        del texts[next(iter(texts))]


def _disk_text(path: Path) -> str:
    from codebot_mcp.core.tools.boundary import read_regular

    data, _ = read_regular(path)
    return data.decode("utf-8", errors="replace")
