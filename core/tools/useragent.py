"""What servers may ask of the user: elicitation, sampling approval, and roots.

``mcpbridge.requests`` turns the servers' requests (``elicitation/create``,
``sampling/createMessage``, ``roots/list``, and the same requests inside a 2026-07-28
``InputRequiredResult``) into the plain data below and asks a :class:`UserAgent`. The REPL
implements one that asks the user; :class:`Policy` answers for non-interactive commands
(``--elicit``, ``--allow-sampling``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

ElicitAction = Literal["accept", "decline", "cancel"]
ElicitMode = Literal["decline", "defaults", "cancel"]
ELICIT_MODES: tuple[str, ...] = ("decline", "defaults", "cancel")
MAX_SAMPLING_PER_TURN = 5
"""Sampling requests one server may make per user turn (or per command): a loop costs money."""
MAX_SAMPLING_TOKENS = 4096
"""The token limit a sampling request may ask for; larger requests are capped to this."""
NO_MODEL = "codebot has no model configured"
"""Why a sampling request is refused where there is no model to answer it."""
NO_SAMPLER = "codebot has no model to sample with in this command"
"""Why sampling is refused by a command that has no sampler (``mcp list``)."""


class SamplingRefusedError(Exception):
    """The request is not sent to the model; ``str()`` says why (the server is told)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """The model's answer to a sampling request."""

    text: str
    model: str
    stop_reason: str | None


class Sampling(Protocol):
    """What the bridge holds to answer ``sampling/createMessage`` once the user approved:
    the agent's ``Sampler`` (the session's model), or :class:`NoSampling`."""

    def check(self, server: str) -> None:
        """Raise :class:`SamplingRefusedError` when ``server`` may not sample now."""
        ...

    async def sample(
        self,
        server: str,
        messages: list[dict[str, str]],
        system_prompt: str | None,
        max_tokens: int,
    ) -> Sample:
        """Send one request; raises :class:`SamplingRefusedError` or ``ModelError``."""
        ...


class NoSampling:
    """A process without a model (the warm holder): every request is refused, after the
    approval, in the words the agent's sampler uses without a model."""

    def check(self, server: str) -> None:
        """Nothing to count: the refusal comes when the request is sent."""

    async def sample(
        self,
        server: str,
        messages: list[dict[str, str]],
        system_prompt: str | None,
        max_tokens: int,
    ) -> Sample:
        raise SamplingRefusedError(NO_MODEL)


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
    """``email``, ``uri``, ``date`` or ``date-time`` are checked; any other is shown only."""
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    """For a list: how many choices at least (``minItems``) and at most (``maxItems``)."""
    max_items: int | None = None


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
        return _choices(field_, text)
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
    if field_.min_length is not None and len(text) < field_.min_length:
        raise ValueError(f"at least {field_.min_length} characters")
    if field_.max_length is not None and len(text) > field_.max_length:
        raise ValueError(f"at most {field_.max_length} characters")
    _check_format(field_.format, text)
    return text


def _choices(field_: ElicitField, text: str) -> list[str]:
    """A list field: comma-separated choices, each allowed, as many as the schema says."""
    values = list(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
    bad = [v for v in values if field_.choices and v not in field_.choices]
    if bad:
        raise ValueError(f"{bad[0]!r} is not one of {', '.join(field_.choices)}")
    if field_.min_items is not None and len(values) < field_.min_items:
        raise ValueError(f"pick at least {field_.min_items}")
    if field_.max_items is not None and len(values) > field_.max_items:
        raise ValueError(f"pick at most {field_.max_items}")
    return values


def _check_format(kind: str | None, text: str) -> None:
    """The string formats elicitation schemas may name; a loose check, for typos."""
    import re
    from datetime import date, datetime

    if kind == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text):
        raise ValueError("not an email address (name@example.com)")
    if kind == "uri" and not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:\S+", text):
        raise ValueError("not a URI (https://example.com/…)")
    try:
        if kind == "date":
            date.fromisoformat(text)
        elif kind == "date-time":
            datetime.fromisoformat(text)
    except ValueError:
        example = "2026-12-01" if kind == "date" else "2026-12-01T09:30:00Z"
        raise ValueError(f"not a {kind} ({example})") from None


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


def refusal_reason(agent: UserAgent, server: str) -> str:
    """Why a sampling request of ``server`` was refused, as the server (and its tool) hears it."""
    if isinstance(agent, Policy):
        return f"no one is asked in a non-interactive run; --allow-sampling {server} allows it"
    return "the user declined the sampling request"
