"""The sandbox: how a ``bash`` command (and a stdio server that opts in) runs confined.

Policy and detection live here; the confinement itself is applied by the exec helper that
``core.proc.spawn`` starts every child through (``core/proc/exec_helper.c``):

- **files** (Landlock, ABI 3 or later): read and execute anywhere; write only in the
  writable paths of the mode, and ``/dev/null`` and the like. The kernel resolves every path,
  so a symlink or ``..`` leading out is refused like a direct write; a hard link out
  (``refer``) and truncating a file outside (``truncate``) are refused too.
- **privileges** (a user namespace, ``no_new_privs``): no capability outside the sandbox,
  root's included; setuid programs gain nothing.
- **network** (a network namespace, unless ``network`` is true): no interface but a loopback
  of its own, so nothing outside is reachable, the host's loopback included. With ``network``
  a list of host patterns, the session's proxy (:mod:`.netproxy`) is the one way out: a
  forwarder in the namespace relays to it, and it lets through only the hosts listed.
- **escapes**: no new ``AF_UNIX`` sockets (a socket such as docker's or the session bus would
  run commands outside) and no ``io_uring`` (seccomp); no mounts, no ``ptrace`` of a process
  outside, and (Landlock ABI 6) no signals to one, no abstract sockets outside.
- **protected** (:mod:`.guarded`): every git directory in the writable trees as a whole, the
  project's ``.codebot``, ``.claude``, ``.mcp.json`` and memory files, codebot's own
  directories and installation stay read-only and cannot be renamed (a private mount
  namespace), so nothing written by a confined command runs later, unconfined, as git's
  configuration, a codebot setting or codebot itself. What is missing cannot be protected:
  its creation is reported after the call (:meth:`Sandbox.watch`).
- **hidden** (:meth:`Sandbox.hidden_paths`): the well-known credential locations
  (:data:`HIDDEN_IN_HOME`, the files their variables name, codebot's token store), the files
  the settings name as secrets and ``sandbox.deny_read``: in the same mount namespace an empty
  read-only tmpfs covers a directory, ``/dev/null`` a file; what the command and its output
  name of them gets a note (:meth:`Sandbox.hidden_note`).

Modes (the ``sandbox`` setting, ``--sandbox``): ``read-only`` writes only a private temp
directory (``$TMPDIR``); ``workspace-write`` (the default where the machine supports it) also
the project root, the configured ``roots`` and ``writable``; ``off``: as without a sandbox.
Where the machine cannot, :attr:`Sandbox.missing` names what it lacks, and nothing claims a
sandbox that is not there: ``bash`` then asks before every command, as it did before.

Size: one policy object whose confinement, notes to the model (a refusal, a hidden path, a
file created) and ``/sandbox`` report all read the same fields; what it protects and what it
hides are their own modules (:mod:`.guarded`, :mod:`.hiding`).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config import notes
from codebot_mcp.core.config.sandboxing import DEFAULT_MODE, MODES, ServerSandbox
from codebot_mcp.core.fsutil import sweep_orphans
from codebot_mcp.core.proc import helper
from codebot_mcp.core.proc.spawn import Confinement, ConfinementError
from codebot_mcp.core.sandbox import guarded, hiding
from codebot_mcp.core.sandbox.hiding import Hidden

if TYPE_CHECKING:
    from codebot_mcp.core.sandbox.netproxy import DomainProxy

FILE_REFUSALS = (
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Invalid cross-device link",  # a hard link or rename out of the writable paths
    "Device or resource busy",  # renaming over a protected path
)
NETWORK_REFUSALS = (
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "No address associated with hostname",
    "nodename nor servname",
    "getaddrinfo",
    "Connection refused",
    "Failed to establish a new connection",
    "Couldn't connect to server",
)
HELPER_FAILED = "codebot-exec:"
QUARANTINE = "quarantine"
"""Under codebot's state directory: what confined commands created of the names git and
codebot read (:meth:`Sandbox.quarantine`)."""
TMP_PREFIX = "codebot-sandbox-"
NETWORK_COMMAND = re.compile(
    r"(?<![./-])\b(?:curl|wget|nc|ncat|netcat|telnet|ssh|scp|rsync|ping|dig|nslookup|host|ftp)\b"
    r"|\bgit\s+(?:clone|fetch|pull|push|ls-remote|submodule)\b"
    r"|\b(?:pip3?|uv|npm|npx|pnpm|yarn|cargo|go|gem|bundle)\s+(?:install|add|get|update|sync)\b"
    r"|https?://|/dev/(?:tcp|udp)/"
)
"""A failed command like these, without network, probably failed for want of it (even when it
printed nothing: ``curl -s``, ``nc -z``)."""
_SIGNS = "|".join(FILE_REFUSALS)
_PATH_BEFORE = re.compile(rf"""['"‘`]?(/[^\s'"’`:]+)['"’`]?:?\s*(?:{_SIGNS})""")
_READ_ONLY = re.compile(r"""['"‘`]?([^\s'"‘’`:]+)['"’`]?:?\s*Read-only file system""")
"""A path refused with EROFS, relative or not: inside a sandbox, a protected path."""
_PATH_AFTER = re.compile(rf"""(?:{_SIGNS})\S*:?\s*['"‘`]?(/[^\s'"’`]+)""")


@dataclass(frozen=True, slots=True)
class Support:
    """What this machine offers the sandbox, as the exec helper measured it."""

    landlock_abi: int = 0
    landlock_min_abi: int = 3
    userns: bool = False
    userns_error: str = ""
    netns: bool = False
    mountns: bool = False
    seccomp: bool = False
    error: str | None = None
    """Why nothing could be measured (no exec helper)."""

    @classmethod
    def of(cls, probe: Mapping[str, Any]) -> Support:
        """From :func:`core.proc.helper.probe`'s answer."""
        if "error" in probe:
            return cls(error=str(probe["error"]))
        return cls(
            landlock_abi=int(probe.get("landlock_abi", 0)),
            landlock_min_abi=int(probe.get("landlock_min_abi", 3)),
            userns=bool(probe.get("userns")),
            userns_error=str(probe.get("userns_error", "")),
            netns=bool(probe.get("netns")),
            mountns=bool(probe.get("mountns")),
            seccomp=bool(probe.get("seccomp")),
        )

    def missing(self, network: bool) -> list[str]:
        """What the sandbox needs and this machine lacks, each named with what it is for."""
        if self.error is not None:
            return [self.error]
        out: list[str] = []
        if self.landlock_abi < self.landlock_min_abi:
            have = f"ABI {self.landlock_abi}" if self.landlock_abi else "none"
            out.append(
                f"Landlock ABI {self.landlock_min_abi}+ (Linux 6.2+; this kernel: {have}): "
                "it confines writes"
            )
        if not self.userns:
            why = f": {self.userns_error}" if self.userns_error else ""
            out.append(
                f"unprivileged user namespaces (unshare failed{why}): they take away every "
                "privilege outside the sandbox"
            )
        elif not self.mountns:
            out.append("mount namespaces: they keep git directories and codebot's files read-only")
        if not network and self.userns and not self.netns:
            out.append("network namespaces: they cut the network")
        if not self.seccomp:
            out.append("seccomp: it stops sockets that lead outside")
        return out

    def summary(self) -> str:
        """One line: what the kernel supports."""
        if self.error is not None:
            return f"unknown ({self.error})"
        parts = [
            f"Landlock ABI {self.landlock_abi}" if self.landlock_abi else "no Landlock",
            "user namespaces" if self.userns else "no user namespaces",
            "network namespaces" if self.netns else "no network namespaces",
            "mount namespaces" if self.mountns else "no mount namespaces",
            "seccomp" if self.seccomp else "no seccomp",
        ]
        if self.landlock_abi and self.landlock_abi < 6:
            parts.append("(signals and abstract sockets are not scoped before Landlock ABI 6)")
        return ", ".join(parts)


_support: Support | None = None


def support() -> Support:
    """This machine's support (measured once per process; a few milliseconds)."""
    global _support
    if _support is None:
        _support = Support.of(helper.probe())
    return _support


class Sandbox:
    """The policy of one session (or one server): mode, network, what it may write.

    Args:
        mode: ``read-only``, ``workspace-write`` or ``off``; None: the default
            (``workspace-write`` where supported, else ``off``).
        network: True lets commands reach the network.
        workspace: The project root (or working directory).
        roots: The configured ``roots`` (writable in ``workspace-write``).
        writable: The configured ``writable`` paths.
        source: Where the mode came from, for messages (``--sandbox``, the settings file).
        machine: What the machine supports (measured when left out).
        deny_read: More paths to hide (``sandbox.deny_read``, files the settings name as
            secrets), on top of the built-in ones.
        domains: Without ``network``: the host patterns commands reach through the proxy
            (``sandbox.network`` as a list, normalized).

    Raises:
        SettingsError: a ``writable`` path holds (or lies in) one of codebot's own
            directories or its installation (:func:`.guarded.refuse_writable`).
    """

    def __init__(
        self,
        mode: str | None,
        *,
        network: bool = False,
        workspace: Path,
        roots: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        source: str = "the default",
        machine: Support | None = None,
        deny_read: Sequence[Path] = (),
        domains: Sequence[str] = (),
    ) -> None:
        assert mode is None or mode in MODES, mode
        self.requested = mode or DEFAULT_MODE
        self.network = network
        self.domains: tuple[str, ...] = () if network else tuple(domains)
        """The hosts reachable through the proxy (none with the whole network)."""
        self._proxy: DomainProxy | None = None
        self.workspace = workspace
        self.roots = tuple(roots)
        self.writable = tuple(writable)
        self.source = source
        self.support = machine if machine is not None else support()
        self.missing: list[str] = [] if self.requested == "off" else self.support.missing(network)
        """What the requested mode needs and the machine lacks (empty: it is enforced)."""
        self.deny_read = tuple(deny_read)
        self._tmp: Path | None = None
        self._candidates: list[str] | None = None
        self._made: dict[tuple[str, str], Hidden] = {}
        self._hidden: list[Hidden] | None = None
        """What the last confinement hid (what a command's note speaks of)."""
        helpers = [helper.INSTALLED] if helper.INSTALLED.exists() else []
        located = helper.locate() if helper.decided() else None
        helpers += [located] if located is not None else []
        self._own = guarded.own_paths(helpers)
        self._scan = guarded.GitScan()
        if self.active and self.requested == "workspace-write":
            guarded.refuse_writable(self.writable, self._own, "sandbox.writable")

    @classmethod
    def for_server(cls, spec: ServerSandbox, workspace: Path) -> Sandbox:
        """The sandbox a stdio server's ``sandbox`` entry asks for."""
        return cls(
            spec.mode,
            network=spec.network,
            workspace=spec.workspace or workspace,
            writable=spec.writable,
            source="the server entry",
            deny_read=spec.deny_read,
            domains=spec.domains,
        )

    @property
    def active(self) -> bool:
        """True when commands really run confined."""
        return self.requested != "off" and not self.missing

    @property
    def mode(self) -> str:
        """The mode in force: the requested one, or ``off`` where it cannot be had."""
        return self.requested if self.active else "off"

    def describe(self) -> str:
        """``workspace-write sandbox, no network`` (or why there is none)."""
        if self.active:
            return f"{self.requested} sandbox, {self._network_short()}"
        if self.requested == "off":
            return "no sandbox (off)"
        return f"no sandbox ({self.requested} is unavailable here)"

    def notice(self) -> str | None:
        """What to say once at start when the sandbox asked for cannot be had (else None)."""
        if not self.missing:
            return None
        asked = f"--sandbox {self.requested}" if self.source == "--sandbox" else self.requested
        return (
            f"sandbox: {asked} is not available on this machine, so commands run unconfined "
            f"and bash asks before each one. Missing: {'; '.join(self.missing)}."
        )

    # -- what a confined child gets ----------------------------------------------------------

    def tmpdir(self) -> Path:
        """The private temp directory (0700, made on first use, removed by :meth:`close`;
        named with our pid, so a later run removes it when a SIGKILL left it behind)."""
        if self._tmp is None:
            _sweep_stale()
            prefix = f"{TMP_PREFIX}{os.getpid()}-"
            self._tmp = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
        return self._tmp

    def writable_paths(self) -> list[Path]:
        """Where a confined command may write: the temp dir, and in ``workspace-write`` the
        project root, ``roots`` and ``writable`` (a missing ``writable`` directory is made
        first, as ``mkdir -p`` would: ``~/.npm`` on a fresh account; other missing paths are
        left out)."""
        if self.requested == "workspace-write":
            for path in self.writable:
                try:
                    path.mkdir(parents=True, exist_ok=True)
                except OSError:  # boundary: not ours to make; it stays unwritable
                    pass
        paths = [self.tmpdir()]
        if self.requested == "workspace-write":
            paths += [self.workspace, *self.roots, *self.writable]
        seen: dict[str, Path] = {}
        for path in paths:
            real = Path(os.path.realpath(path))
            if real.exists():
                seen.setdefault(str(real), real)
        return list(seen.values())

    def guard(self, writable: Sequence[Path]) -> guarded.Plan:
        """What stays read-only (and unrenameable) inside ``writable``: the git directories
        and project files found there, codebot's own paths (:mod:`.guarded`)."""
        tmp = self.tmpdir()
        found = self._scan.find([w for w in writable if w != tmp])
        return guarded.plan(writable, found, self._own)

    def protected_paths(self, writable: Sequence[Path]) -> list[Path]:
        """The read-only paths inside ``writable`` (:meth:`guard`)."""
        return list(self.guard(writable).protected)

    def hidden_paths(self, writable: Iterable[Path] | None = None) -> list[Hidden]:
        """What confined commands cannot read, as it stands now (a path that does not
        exist is left out: there is nothing to cover): the built-in credential locations,
        the files credential-named variables name, codebot's token store and
        ``deny_read``, each by its real path. A path that holds the project, home or a
        writable directory is never hidden (that would hide the work itself)."""
        if self._candidates is None:  # the environment and settings of a session: once
            found = (*hiding.secret_locations(os.environ), *self.deny_read)
            self._candidates = list(dict.fromkeys(str(p) for p in found))
        keep = [os.path.realpath(p) for p in (Path.home(), self.workspace)]
        keep += [str(p) for p in (writable or self.writable_paths())]
        out: dict[str, Hidden] = {}
        for shown in self._candidates:
            try:  # most of them are missing: one system call each
                link = stat.S_ISLNK(os.lstat(shown).st_mode)
            except OSError:
                continue
            # A symlink is followed here (the helper refuses one); a directory on the way
            # there, by the kernel when the helper covers it.
            real = os.path.realpath(shown) if link else shown
            if real in out or (link and not os.path.exists(real)):
                continue
            if any(k == real or k.startswith(real.rstrip("/") + "/") for k in keep):
                continue
            made = self._made.get((shown, real))
            if made is None:  # pathlib is slow: one object per (path, target), kept
                made = self._made[(shown, real)] = Hidden(Path(shown), Path(real))
            out[real] = made
        for device in hiding.block_devices():
            out.setdefault(str(device.real), device)
        return list(out.values())

    def hidden_reals(self) -> list[Path]:
        """:meth:`hidden_paths` with every symlink followed (for the file tools' boundary,
        which compares real paths)."""
        return [Path(os.path.realpath(h.real)) for h in self.hidden_paths()]

    def confinement(self) -> Confinement:
        """What the exec helper applies to a command."""
        writable = self.writable_paths()
        guard = self.guard(writable)
        hidden = self._hidden = self.hidden_paths(writable)
        pinned = dict.fromkeys((*(str(p) for p in guard.pinned), *hiding.pins(hidden, writable)))
        return Confinement(
            tuple(str(p) for p in writable),
            tuple(str(p) for p in guard.protected),
            self.network,
            hidden=tuple(str(h.real) for h in hidden),
            pinned=tuple(pinned),
            proxy=self._proxy_spec(),
        )

    def _proxy_spec(self) -> tuple[int, str] | None:
        """The proxy for :attr:`domains` (started on first use, for the session).

        Raises:
            ConfinementError: it cannot be started (nothing runs then).
        """
        if not self.domains:
            return None
        from codebot_mcp.core.sandbox import netproxy  # sockets and threads: only then

        if self._proxy is None:
            self._proxy = netproxy.DomainProxy(self.domains)
        try:
            path = self._proxy.start()
        except OSError as exc:
            raise ConfinementError(f"the network proxy cannot start: {exc}") from None
        return (netproxy.PORT, str(path))

    def network_mark(self) -> float:
        """Before a confined call: the point :meth:`refused_hosts` counts refusals from."""
        return self._proxy.mark() if self._proxy is not None else 0.0

    def refused_hosts(self, mark: float) -> list[str]:
        """The hosts the proxy refused since ``mark`` (:meth:`network_mark`)."""
        return self._proxy.refusals_since(mark) if self._proxy is not None else []

    def network_note(self, hosts: Sequence[str]) -> str | None:
        """What a call's result says when the proxy refused ``hosts`` during it."""
        if not hosts or self._proxy is None:
            return None
        return self._proxy.note(hosts)

    def watch(self, cwd: Path) -> guarded.Watch:
        """Start noting what a call creates of ``.git``, ``.codebot``, ``.claude``,
        ``.mcp.json`` and the memory files, from the project root down to ``cwd`` (a
        missing one cannot be protected)."""
        if self.requested != "workspace-write":
            return guarded.Watch(())
        return guarded.Watch(notes.directories(self.workspace, cwd))

    def quarantine(self, created: Sequence[Path]) -> list[tuple[Path, Path | None]]:
        """Move what a confined call created of :data:`.guarded.WATCHED_NAMES` out of the
        project, into codebot's state directory (which no sandbox can write), so nothing a
        confined command wrote is read later by git, codebot or Claude Code outside the
        sandbox; nothing is deleted. Returns each path with where it went (None: it could not
        be moved, and stays where it is)."""
        import secrets
        import time

        from codebot_mcp.core.config import paths

        if not created:
            return []
        stamp = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        folder = paths.private_dir(paths.state_dir() / QUARANTINE / stamp)
        moved: list[tuple[Path, Path | None]] = []
        for path in created:
            rel = os.path.relpath(path, self.workspace)
            name = rel.replace(os.sep, "__") if not rel.startswith("..") else path.name
            target = folder / name
            try:
                shutil.move(str(path), str(target))
            except OSError:  # boundary: reported as created and not moved, never lost
                moved.append((path, None))
                continue
            moved.append((path, target))
        return moved

    def created_note(self, moved: Sequence[tuple[Path, Path | None]]) -> str:
        """What the result says when a confined call created one of
        :data:`.guarded.WATCHED_NAMES` (:meth:`quarantine` moved it away)."""
        away = [f"{path} (moved to {target})" for path, target in moved if target is not None]
        kept = [str(path) for path, target in moved if target is None]
        parts = []
        if away:
            parts.append(
                f"[sandbox: this command created {', '.join(away)}. A confined command may not "
                "create these: git, codebot and Claude Code read them outside the sandbox (a "
                "new .git's hooks and config run on your next git command). Nothing is lost: "
                "the user can look at the moved copy. To create one on purpose, use the write "
                'tool, or call bash again with "sandbox": false; the user is asked first.]'
            )
        if kept:
            parts.append(
                f"[sandbox: this command created {', '.join(kept)}, which could not be moved "
                "out of the project; the user is told to check it before using git or codebot "
                "there.]"
            )
        return "\n".join(parts)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with ``TMPDIR`` (and ``TMP``, ``TEMP``) on the private temp directory, and
        with :attr:`domains` the proxy variables (``HTTPS_PROXY``...) on the forwarder."""
        tmp = str(self.tmpdir())
        proxy: dict[str, str] = {}
        if self.domains:
            from codebot_mcp.core.sandbox import netproxy

            proxy = netproxy.environment()
        return {**env, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp, **proxy}

    def close(self) -> None:
        """Remove the private temp directory; stop the proxy."""
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    # -- what the user and the model are told --------------------------------------------------

    def report(self) -> list[str]:
        """``/sandbox``: mode, network, writable paths, what the kernel supports."""
        lines = [f"mode: {self.mode} (asked: {self.requested}, from {self.source})"]
        if self.missing:
            lines.append("not enforced here; missing: " + "; ".join(self.missing))
            lines.append("bash asks before every command")
        if self.requested != "off":
            lines.append("network: " + self._network_long())
            if self.active:
                lines.append("writable:")
                writable = self.writable_paths()
                lines += [f"  {p}" for p in writable]
                guard = self.guard(writable)
                if guard.protected:
                    lines.append("read-only inside them (and not renameable):")
                    lines += [f"  {p}" for p in guard.protected]
                if self._scan.capped:
                    lines.append(
                        f"the scan for nested git repositories stopped at "
                        f"{guarded.MAX_DIRS} directories, {guarded.MAX_DEPTH} levels or "
                        f"{guarded.MAX_SCAN_SECONDS} s: repositories past it are not protected"
                    )
                hidden = self.hidden_paths(writable)
                if hidden:
                    lines.append("hidden (credentials; sandbox.deny_read adds more):")
                    lines += [f"  {h.shown}" for h in hidden]
                lines.append(
                    'bash runs confined without asking (unless a permission rule asks); "sandbox":'
                    " false on a call runs it outside, after asking"
                )
        lines.append(f"kernel: {self.support.summary()}")
        return lines

    def refusal_note(self, output: str, command: str = "", cwd: Path | None = None) -> str | None:
        """For a failed confined command: a note naming the sandbox when its output (or, for
        the network, the command itself) looks like the sandbox refused something (a write
        outside or to a protected path, the network), else None. A relative path in the
        output is taken from ``cwd`` (the project root when left out)."""
        failed = [x for x in output.splitlines() if x.startswith(HELPER_FAILED)]
        if failed:  # the helper's own message (not a path that ends in codebot-exec)
            line = failed[0]
            return (
                f"[sandbox: the {self.requested} sandbox could not be set up ({line.strip()}). "
                'Call bash again with "sandbox": false to run it unconfined; the user will be '
                "asked.]"
            )
        what: list[str] = []
        read_only = _READ_ONLY.search(output)
        if read_only is not None and guarded.GIT in Path(read_only.group(1)).parts:
            refused = os.path.normpath((cwd or self.workspace) / read_only.group(1))
            return (
                f"[sandbox: git directories are read-only in the {self.requested} sandbox "
                f"(refused: a write to {refused}): what git reads there (hooks, config) would "
                "run outside the sandbox. Commands that write a repository (git add, commit, "
                "checkout, stash, fetch, init over it) need an unsandboxed run: call bash "
                'again with "sandbox": false; the user is asked first.]'
            )
        if read_only is not None:  # EROFS: a protected path, relative or not
            refused = os.path.normpath((cwd or self.workspace) / read_only.group(1))
            if self._refuses(Path(refused)):
                what.append(f"a write to {refused}, which stays read-only")
        if not what and any(sign in output for sign in FILE_REFUSALS):
            where = _refused_path(output)
            if where is None:
                what.append("a write outside the writable paths")
            elif self._refuses(Path(where)):
                what.append(f"a write to {where}")
            elif "Device or resource busy" in output:
                what.append(
                    "renaming or removing a protected path (a git directory, a project or "
                    "codebot file kept read-only, or a directory holding one)"
                )
        if not self.network and (
            any(sign in output for sign in NETWORK_REFUSALS)
            or (not self.domains and NETWORK_COMMAND.search(command))
        ):
            what.append("network access" if not self.domains else "a direct network connection")
        if not what:
            return None
        return (
            f"[sandbox: this command ran in the {self.requested} sandbox: it may write only "
            f"in {self._where()}, and {self._network_words()}. The error looks like the sandbox "
            f"refused {' and '.join(what)}. If the command really needs that, call bash again "
            'with "sandbox": false: it then runs outside the sandbox, after the user approves.]'
        )

    def hidden_note(self, command: str, output: str, cwd: Path | None = None) -> str | None:
        """For a confined command that named a hidden path (in the command, or in its
        output: ``cat: /home/me/.ssh/id_ed25519: No such file or directory``), or a path of
        the command that leads into one (a symlink), whatever its exit status: a note that
        the sandbox hid it, and how to get it if it is really needed; else None."""
        text = f"{command}\n{output}"
        hidden = self._hidden if self._hidden is not None else self.hidden_paths()
        bases = (Path.home(), cwd or self.workspace)
        named = [h for h in hidden if h.named_in(text, bases)]
        named += [
            h for h in hiding.reached(command, cwd or self.workspace, hidden) if h not in named
        ]
        if not named:
            return None
        shown = ", ".join(str(h.shown) for h in named[:6])
        if len(named) > 6:
            shown += f" and {len(named) - 6} more"
        verb = "is" if len(named) == 1 else "are"
        return (
            f"[sandbox: {shown} {verb} hidden from commands in the {self.requested} sandbox: "
            "it holds credentials, so a directory there looks empty and a file reads as empty. "
            'If the command really needs it, call bash again with "sandbox": false: it then '
            "runs outside the sandbox, after the user approves.]"
        )

    def _refuses(self, path: Path) -> bool:
        """Whether the sandbox (and not the file's own permissions) would refuse writing
        ``path``: it lies outside the writable paths, or in a protected one, and codebot
        itself could write there."""
        real = Path(os.path.realpath(path))
        writable = self.writable_paths()
        inside = any(real == w or w in real.parents for w in writable)
        protected = any(real == p or p in real.parents for p in self.protected_paths(writable))
        if inside and not protected:
            return False
        existing = next((p for p in (real, *real.parents) if p.exists()), Path("/"))
        return os.access(existing, os.W_OK)

    def _where(self) -> str:
        paths = [str(p) for p in self.writable_paths()]
        shown = ", ".join(paths[:6]) + (f" and {len(paths) - 6} more" if len(paths) > 6 else "")
        return (
            f"{shown} ($TMPDIR is {self.tmpdir()}; git directories, .codebot, .claude, "
            ".mcp.json, the memory files and codebot's own files stay read-only)"
        )

    def _network_words(self) -> str:
        if self.network:
            return "it has the network"
        if self.domains:
            return (
                f"it reaches only {', '.join(self.domains)} over HTTP(S), through the proxy "
                "that HTTPS_PROXY names (nothing else, the host's loopback included)"
            )
        return "it has no network (the host's loopback included)"

    def _network_short(self) -> str:
        if self.network:
            return "network on"
        if self.domains:  # a line of the first screen: three at most
            more = len(self.domains) - 3
            return f"network: {', '.join(self.domains[:3])}{f' +{more}' if more > 0 else ''} only"
        return "no network"

    def _network_long(self) -> str:
        if self.network:
            return "on"
        if self.domains:
            return (
                f"only {', '.join(self.domains)}, over HTTP and HTTPS through codebot's proxy "
                "(it sees host names, never content); nothing else, loopback included"
            )
        return "off (none at all, loopback included)"


_swept = False


def _sweep_stale() -> None:
    """Remove the private temp directories of codebot processes that are gone (a SIGKILL
    leaves them behind); once per process, only our own."""
    global _swept
    if _swept:
        return
    _swept = True
    sweep_orphans((Path(tempfile.gettempdir()),), TMP_PREFIX)


def _refused_path(output: str) -> str | None:
    for pattern in (_PATH_BEFORE, _PATH_AFTER):
        match = pattern.search(output)
        if match:
            return match.group(1)
    return None
