"""What servers may ask of the user: elicitation, sampling approval, and roots.

``mcpbridge.requests`` turns the servers' requests (``elicitation/create``,
``sampling/createMessage``, ``roots/list``, and the same requests inside a 2026-07-28
``InputRequiredResult``) into the plain data below and asks a :class:`UserAgent`. The REPL
implements one that asks the user; :class:`Policy` answers for non-interactive commands
(``--elicit``, ``--allow-sampling``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

ElicitAction = Literal["accept", "decline", "cancel"]
ElicitMode = Literal["decline", "defaults", "cancel"]
ELICIT_MODES: tuple[str, ...] = ("decline", "defaults", "cancel")
SamplingAnswer = Literal["yes", "no", "always"]
MAX_SAMPLING_PER_TURN = 5
"""Sampling requests one server may make per user turn (or per command): a loop costs money."""
MAX_SAMPLING_TOKENS = 4096
"""The token limit a sampling request may ask for; larger requests are capped to this."""


@dataclass(frozen=True, slots=True)
class ElicitField:
    """One field of a form-mode elicitation (a primitive property of the requested schema)."""

    name: str
    type: str
    """``string``, ``number``, ``integer`` or ``boolean``."""
    title: str | None = None
    description: str | None = None
    required: bool = False
    default: Any = None
    has_default: bool = False
    choices: tuple[str, ...] = ()
    """Allowed values (``enum``/``oneOf``/``anyOf`` consts); empty for free input."""
    choice_titles: tuple[str, ...] = ()
    multiple: bool = False
    """An array of choices (``type: array`` with enum items)."""
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True, slots=True)
class ElicitRequest:
    """A server asks the user for input: a form (fields) or a URL to open."""

    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    fields: tuple[ElicitField, ...] = ()
    url: str | None = None
    elicitation_id: str | None = None


@dataclass(frozen=True, slots=True)
class ElicitAnswer:
    """The user's answer: accept (with the content for a form), decline or cancel."""

    action: ElicitAction
    content: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """A server asks to use the session's model."""

    server: str
    messages: tuple[tuple[str, str], ...]
    """(role, text) pairs, text already reduced to one line per block."""
    system_prompt: str | None
    max_tokens: int


class UserAgent(Protocol):
    """Answers a server's requests on the user's behalf."""

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        """Ask for the input a server needs (a form, or consent to open a URL)."""
        ...

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        """True when the server may use the model for this request."""
        ...

    def roots(self) -> list[Path]:
        """The directories servers may work in (answers ``roots/list``)."""
        ...


def defaults_answer(request: ElicitRequest) -> ElicitAnswer:
    """Accept with the schema's defaults (SEP-1034); decline when a required field has none.

    A URL-mode request is declined: nothing is opened without a person saying yes.
    """
    if request.mode != "form":
        return ElicitAnswer("decline")
    content: dict[str, Any] = {}
    for f in request.fields:
        if f.has_default:
            content[f.name] = f.default
        elif f.required:
            return ElicitAnswer("decline")
    return ElicitAnswer("accept", content)


def coerce(field_: ElicitField, text: str) -> Any:
    """The typed value for what the user typed; raises ``ValueError`` with a reason."""
    text = text.strip()
    if field_.multiple:
        values = [v.strip() for v in text.split(",") if v.strip()]
        bad = [v for v in values if field_.choices and v not in field_.choices]
        if bad:
            raise ValueError(f"{bad[0]!r} is not one of {', '.join(field_.choices)}")
        return values
    if field_.type == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    if field_.type in ("number", "integer"):
        try:
            value: float | int = int(text) if field_.type == "integer" else float(text)
        except ValueError:
            raise ValueError(
                f"{text!r} is not {'an integer' if field_.type == 'integer' else 'a number'}"
            ) from None
        if field_.minimum is not None and value < field_.minimum:
            raise ValueError(f"the minimum is {field_.minimum:g}")
        if field_.maximum is not None and value > field_.maximum:
            raise ValueError(f"the maximum is {field_.maximum:g}")
        return value
    if field_.choices and text not in field_.choices:
        raise ValueError(f"{text!r} is not one of {', '.join(field_.choices)}")
    return text


@dataclass
class Policy:
    """The non-interactive user agent: ``--elicit`` and ``--allow-sampling``.

    Args:
        elicit: ``decline`` (default), ``defaults`` (SEP-1034) or ``cancel``.
        allow_sampling: Servers whose sampling requests go to the model without asking.
        root_dirs: The roots offered to servers.
    """

    elicit_mode: ElicitMode = "decline"
    allow_sampling: frozenset[str] = frozenset()
    root_dirs: list[Path] = field(default_factory=list[Path])

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        """Answer by the policy."""
        if self.elicit_mode == "defaults":
            return defaults_answer(request)
        return ElicitAnswer(self.elicit_mode)

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        """Only servers named with ``--allow-sampling``."""
        return request.server in self.allow_sampling

    def roots(self) -> list[Path]:
        """The configured roots."""
        return list(self.root_dirs)


def root_dirs(project_root: Path | None, cwd: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """The project root (or the working directory), then the ``roots`` setting, deduplicated."""
    out: list[Path] = []
    for path in (project_root or cwd, *extra):
        resolved = path.resolve()
        if resolved not in out:
            out.append(resolved)
    return out


def parse_roots(path: Path, roots: Any) -> tuple[Path, ...]:
    """The ``roots`` setting of ``path``: relative to the project root (the project file) or
    to the home directory (the global file).

    Raises:
        SettingsError: it is not a list of strings.
    """
    from core import paths
    from core.errors import SettingsError
    from core.servers import is_str_list, json_type

    if not is_str_list(roots):
        raise SettingsError(
            f"'roots' in {path} must be a list of directory paths, found {json_type(roots)}",
            hint='Write it as "roots": ["~/src/shared", "../docs"].',
        )
    base = path.parent.parent if path.parent.name == paths.PROJECT_DIR else Path.home()
    return tuple((base / Path(r).expanduser()).resolve() for r in roots)
