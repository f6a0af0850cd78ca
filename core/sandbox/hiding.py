"""What the sandbox hides from confined commands (issue 29: secrets are not readable from
inside): the credential locations (:data:`HIDDEN_IN_HOME`, the files their variables and
credential-named variables name, codebot's token store and transcripts, the files the
settings name as secrets, the raw disks), each as a :class:`Hidden` path, and how a command
that names or reaches one is spotted for its note. :class:`core.sandbox.confinement.Sandbox`
asks for them at each confinement; the exec helper covers them (``--hide``) and pins the
folders above them (:func:`pins`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.secrets.credentials import SHELL_CREDENTIAL_NAME

if TYPE_CHECKING:
    from codebot_mcp.core.config.settings import Settings

HIDDEN_IN_HOME: tuple[str, ...] = (
    # keys and cloud credentials
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".kube",
    ".docker/config.json",
    ".oci",
    ".config/doctl",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    # package registries, git and databases
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/git/credentials",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pgpass",
    ".my.cnf",
    # keyrings and password stores
    ".local/share/keyrings",
    ".local/share/kwalletd",
    ".password-store",
    ".config/op",
    # browser and mail profiles (cookies, saved passwords)
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    "snap/firefox",
    "snap/chromium",
    # other agents' tokens
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".config/github-copilot",
)
"""Hidden from confined commands, relative to home (``.config/…`` and ``.local/share/…`` also
under ``$XDG_CONFIG_HOME`` and ``$XDG_DATA_HOME``)."""
HIDDEN_BY_VARIABLE: tuple[tuple[str, str], ...] = (
    ("GNUPGHOME", ""),
    ("AWS_SHARED_CREDENTIALS_FILE", ""),
    ("AWS_CONFIG_FILE", ""),
    ("AZURE_CONFIG_DIR", ""),
    ("CLOUDSDK_CONFIG", ""),
    ("GOOGLE_APPLICATION_CREDENTIALS", ""),
    ("GH_CONFIG_DIR", ""),
    ("KUBECONFIG", ""),
    ("DOCKER_CONFIG", "config.json"),
    ("NETRC", ""),
    ("NPM_CONFIG_USERCONFIG", ""),
    ("PASSWORD_STORE_DIR", ""),
)
"""Where a tool's variable moves its credentials (``KUBECONFIG`` may list several files):
hidden there too."""
CODEBOT_HIDDEN = ("oauth", "sessions", "chat_history")
"""In codebot's state directory: the OAuth token store (``mcpbridge/auth/token_store.py``), past
sessions' transcripts and the prompt history (what an approved command outside read)."""


@dataclass(frozen=True, slots=True)
class Hidden:
    """One path confined commands cannot read."""

    shown: Path
    """As listed (``~/.ssh`` expanded), for messages."""
    real: Path
    """Every symlink followed: what the exec helper covers."""

    def named_in(self, text: str, bases: Sequence[Path] = ()) -> bool:
        """Whether ``text`` names this path: absolute, ``~/…``, ``$HOME/…``, or (for a path
        in home or in one of ``bases``, the working directory) its relative name standing
        alone (``cd && cat .netrc``, ``cat .env.local``)."""
        if self.shown.name not in text and self.real.name not in text:
            return False  # the common case, without building a pattern
        return _spelling(self.shown, self.real, tuple(bases)).search(text) is not None


_END = r"(?=$|[/\s'\"`:;,)\]])"
_WORD = re.compile(r"[^\s'\"`;|&<>()]+")
_MAX_WORDS = 64
"""Words of a command looked up as paths (for a symlink leading into a hidden path)."""


def reached(command: str, cwd: Path, hidden: Sequence[Hidden]) -> list[Hidden]:
    """The hidden paths that words of ``command``, taken as paths from ``cwd``, lead into
    (``ln -s ~/.ssh/id_ed25519 k; cat k`` in an earlier call: ``cat k``)."""
    out: list[Hidden] = []
    if not hidden:
        return out
    for word in _WORD.findall(command)[:_MAX_WORDS]:
        path = os.path.join(cwd, os.path.expanduser(word))
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        for h in hidden:
            base = str(h.real)
            if (real == base or real.startswith(base + "/")) and h not in out:
                out.append(h)
    return out


def _spelling(shown: Path, real: Path, bases: tuple[Path, ...] = ()) -> re.Pattern[str]:
    forms = {str(shown), str(real)}
    bare: set[str] = set()
    home = Path.home()
    for path in (shown, real):
        if path.is_relative_to(home) and path != home:
            rel = path.relative_to(home).as_posix()
            forms |= {f"~/{rel}", f"$HOME/{rel}", f"${{HOME}}/{rel}"}
            bare.add(rel)
        for base in bases:
            if path.is_relative_to(base) and path != base:
                rel = path.relative_to(base).as_posix()
                forms.add(f"./{rel}")
                bare.add(rel)
    alternatives = [re.escape(f) + _END for f in sorted(forms)]
    alternatives += [r"(?:^|(?<=[\s'\"=(`]))" + re.escape(b) + _END for b in sorted(bare)]
    return re.compile("|".join(alternatives), re.MULTILINE)


def pins(hidden: Iterable[Hidden], writable: Iterable[Path]) -> tuple[str, ...]:
    """The folders between a writable directory and a hidden path inside it (``~/.config``
    for ``~/.config/gh`` when home is writable): each is pinned (a mount point), or a
    command could move it (``mv ~/.config ~/c``) and the next one read ``~/c/gh`` unhidden."""
    roots = [str(w) for w in writable]
    out: dict[str, None] = {}
    for h in hidden:
        parent = os.path.realpath(os.path.dirname(h.real))
        for root in roots:
            if parent.startswith(root.rstrip("/") + "/"):
                while parent != root and parent not in out:
                    out[parent] = None
                    parent = os.path.dirname(parent)
    return tuple(sorted(out))  # parents first: a pin holds the pins below it


def secret_locations(environ: Mapping[str, str]) -> list[Path]:
    """Every candidate to hide, existing or not: :data:`HIDDEN_IN_HOME` (and under the XDG
    directories), the files :data:`HIDDEN_BY_VARIABLE` and credential-named variables name,
    codebot's token store and transcripts."""
    from codebot_mcp.core.config import paths

    home = Path.home()
    bases = {
        ".config/": environ.get("XDG_CONFIG_HOME"),
        ".local/share/": environ.get("XDG_DATA_HOME"),
    }
    out = [home / rel for rel in HIDDEN_IN_HOME]
    for rel in HIDDEN_IN_HOME:
        for prefix, base in bases.items():
            if base and rel.startswith(prefix) and os.path.isabs(base):
                out.append(Path(base) / rel[len(prefix) :])
    for name, inside in HIDDEN_BY_VARIABLE:
        for value in environ.get(name, "").split(os.pathsep):
            if value and os.path.isabs(os.path.expanduser(value)):
                out.append(Path(os.path.expanduser(value)) / inside)
    out += secret_files(environ)
    state = paths.state_dir()
    out += [state / name for name in CODEBOT_HIDDEN]
    return out


def secret_files(env: Mapping[str, str]) -> list[Path]:
    """The paths credential-named variables of ``env`` name (``*_KEY_FILE``,
    ``GOOGLE_APPLICATION_CREDENTIALS``): absolute or ``~/…`` values, each part of a
    ``:``-separated list."""
    out: list[Path] = []
    for name, value in env.items():
        if not SHELL_CREDENTIAL_NAME.search(name):  # its value, a path, names a secret file
            continue
        for part in value.split(os.pathsep):
            part = os.path.expanduser(part.strip())
            if part and os.path.isabs(part) and "\n" not in part:
                out.append(Path(os.path.normpath(part)))
    return out


def settings_secrets(settings: Settings) -> list[Path]:
    """Files the settings name as secrets: paths in server entries' credential-named
    ``env`` (``"GOOGLE_APPLICATION_CREDENTIALS": "/home/me/sa.json"``), and the global
    settings file itself when it holds a credential written in clear (the check of ``mcp
    add``: ``"Authorization": "Bearer …"``, a ``ghp_…`` value)."""
    out: list[Path] = []
    for config in settings.servers.values():
        out += secret_files(config.env)
    if settings.global_file is not None and _holds_secret(settings.global_file):
        out.append(settings.global_file)
    return out


_MAX_SETTINGS_BYTES = 4 * 1024 * 1024
"""A global settings file larger than this is not scanned for clear secrets."""


def _holds_secret(path: Path) -> bool:
    from codebot_mcp.core import jsonutil
    from codebot_mcp.core.secrets.scan import looks_secret

    try:
        if path.stat().st_size > _MAX_SETTINGS_BYTES:
            return False
        data = jsonutil.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # boundary: unreadable or invalid: settings said so already
        return False
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack += [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(key, v) for v in value]
        elif isinstance(value, str) and looks_secret(key, value):
            return True
    return False


_devices: list[Hidden] | None = None


def block_devices() -> list[Hidden]:
    """The block devices in ``/dev`` this process may open for reading (root's disks): a
    confined root could read a secret off the raw disk, under every mount. Listed once."""
    global _devices
    if _devices is None:
        found: list[Path] = []
        try:
            with os.scandir("/dev") as entries:
                for entry in entries:
                    try:
                        mode = entry.stat(follow_symlinks=False).st_mode
                    except OSError:
                        continue
                    if stat.S_ISBLK(mode) and os.access(entry.path, os.R_OK):
                        found.append(Path(entry.path))
        except OSError:  # boundary: no /dev to list (not Linux)
            pass
        _devices = [Hidden(p, p) for p in sorted(found)]
    return _devices
