"""Server-to-client requests: elicitation, sampling, roots, and log messages.

One :class:`ServerRequests` per server registers the SDK callbacks (passing them is what
declares the ``elicitation``, ``sampling`` and ``roots`` capabilities). The same callbacks
answer the requests a 2026-07-28 server embeds in an ``InputRequiredResult`` (SEP-2322): the
SDK retries the call with the answers and the echoed ``requestState``. Each request becomes
plain data for a :class:`core.useragent.UserAgent`; nothing here talks to the terminal.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

from codebot_mcp.core.agent.sampling import Sampler, SamplingRefused
from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.tools.useragent import (
    MAX_SAMPLING_TOKENS,
    ElicitField,
    ElicitRequest,
    SamplingRequest,
    UserAgent,
    refusal_reason,
)

logger = logging.getLogger(__name__)

USER_REJECTED = -1
"""The spec's error code for a sampling request the user rejected."""
MAX_FIELDS = 50
"""A form with more fields than this is declined: no one answers 500 questions."""
MAX_TEXT = 10_000
"""Characters of a server's message or a log line kept (a hostile server may send megabytes)."""


MAX_INPUT_ROUNDS = 10
"""Rounds of answers one multi-round call (SEP-2322) gets before codebot gives up on it: a
server that asks forever must not hold the call (nor the user) forever."""


def too_many_rounds(server: str, what: str) -> str:
    """The message for a call that still asked for input after ``MAX_INPUT_ROUNDS`` rounds."""
    return (
        f"{what} on server '{server}' still asked for input after {MAX_INPUT_ROUNDS} rounds "
        "of answers; codebot gave up"
    )


TOO_MANY_ROUNDS_HINT = (
    "The server loops on its input requests (SEP-2322); report it to its authors."
)

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class ServerRequests:
    """The callbacks for one server.

    Args:
        server: The server's name (every request is shown under it).
        agent: Who answers (the REPL, or the non-interactive policy).
        sampler: Sends approved sampling requests to the model; None refuses them all.
        log: Writes one line to the server's log file.
    """

    def __init__(
        self,
        server: str,
        agent: UserAgent,
        sampler: Sampler | None = None,
        log: Callable[[str], None] | None = None,
        log_level: str | None = None,
    ) -> None:
        self.server = server
        self.min_level = LEVELS.index(log_level) if log_level in LEVELS else 0
        """Messages below the server's ``log_level`` are dropped (not every server filters)."""
        self.agent = agent
        self.sampler = sampler
        self.log = log
        self.scrub_log: Callable[[str], str] | None = None
        """Scrubs the text of each log message (a stream: a secret split in two is masked)."""

    def callbacks(self) -> dict[str, Any]:
        """Keyword arguments for the SDK ``Client``."""
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.list_roots,
            "logging_callback": self.on_log,
            "input_required_max_rounds": MAX_INPUT_ROUNDS,
        }

    async def elicit(
        self, _ctx: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """``elicitation/create``: form or URL mode, answered by the user agent."""
        message = params.message[:MAX_TEXT]
        if isinstance(params, types.ElicitRequestURLParams):
            request = ElicitRequest(
                self.server,
                message,
                mode="url",
                url=params.url,
                elicitation_id=params.elicitation_id,
            )
        else:
            fields = form_fields(params.requested_schema)
            if fields is None:
                return types.ErrorData(
                    code=types.INVALID_PARAMS,
                    message="codebot cannot ask for this form: its schema is not a flat object "
                    f"of at most {MAX_FIELDS} primitive fields",
                )
            request = ElicitRequest(self.server, message, fields=tuple(fields))
        answer = await self.agent.elicit(request)
        if answer.action != "accept":
            return types.ElicitResult(action=answer.action)
        if request.mode == "url":
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content=dict(answer.content or {}))

    async def sample(
        self, _ctx: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        """``sampling/createMessage``: asked first, then sent to the session's model."""
        if self.sampler is None:
            return _refuse("codebot has no model to sample with in this command")
        messages = [(m.role, _sampling_text(m.content)) for m in params.messages]
        request = SamplingRequest(
            self.server,
            tuple(messages),
            params.system_prompt,
            min(params.max_tokens, MAX_SAMPLING_TOKENS),
        )
        try:
            self.sampler.check(self.server)
            if not await self.agent.approve_sampling(request):
                return _refuse(refusal_reason(self.agent, self.server))
            sample = await self.sampler.sample(
                self.server,
                [{"role": role, "content": text} for role, text in messages],
                params.system_prompt,
                request.max_tokens,
            )
        except SamplingRefused as exc:
            return _refuse(str(exc))
        except CodebotError as exc:  # the model API failed: the server is told, we go on
            return types.ErrorData(code=types.INTERNAL_ERROR, message=exc.message)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=sample.text),
            model=sample.model,
            stop_reason=sample.stop_reason,
        )

    async def list_roots(self, _ctx: ClientRequestContext) -> types.ListRootsResult:
        """``roots/list``: the project root (or working directory) and the ``roots`` setting."""
        roots = [
            types.Root.model_validate({"uri": p.as_uri(), "name": p.name or str(p)})
            for p in self.agent.roots()
        ]
        return types.ListRootsResult(roots=roots)

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """``notifications/message`` goes to the server's log file, one line each."""
        if self.log is None:
            return
        if params.level in LEVELS and LEVELS.index(params.level) < self.min_level:
            return
        data = params.data if isinstance(params.data, str) else json.dumps(params.data)
        if self.scrub_log is not None:
            data = self.scrub_log(data)
        source = f" {params.logger}" if params.logger else ""
        line = f"[{params.level}{source}] {data}"[:MAX_TEXT]
        try:
            self.log(line.replace("\r", "\\r").replace("\n", "\\n"))
        except OSError as exc:
            logger.debug("server %s: cannot write its log: %s", self.server, exc)


def _refuse(reason: str) -> types.ErrorData:
    return types.ErrorData(code=USER_REJECTED, message=f"sampling refused: {reason}")


def _sampling_text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    parts: list[str] = []
    for block in blocks:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'unknown')} content]")
    return "\n".join(parts)[: MAX_TEXT * 10]


def form_fields(schema: Mapping[str, Any] | Any) -> list[ElicitField] | None:
    """The fields of a form-mode schema; None when it is not a flat object of primitives."""
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties", {})  # pyright: ignore[reportUnknownMemberType]
    required = schema.get("required", [])  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(properties, Mapping) or len(properties) > MAX_FIELDS:  # pyright: ignore[reportUnknownArgumentType]
        return None
    needed = set(required) if isinstance(required, list) else set()  # pyright: ignore[reportUnknownArgumentType]
    fields: list[ElicitField] = []
    for name, prop in properties.items():  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(name, str) or not isinstance(prop, Mapping):
            return None
        field_ = _field(name, prop, name in needed)  # pyright: ignore[reportUnknownArgumentType]
        if field_ is None:
            return None
        fields.append(field_)
    return fields


def _choices(prop: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``enum`` (with legacy ``enumNames``), or ``oneOf``/``anyOf`` of ``const`` + ``title``."""
    if isinstance(prop.get("enum"), list):
        values = tuple(str(v) for v in prop["enum"])
        names = prop.get("enumNames")
        titles = tuple(str(n) for n in names) if isinstance(names, list) else ()
        return values, titles if len(titles) == len(values) else ()
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if isinstance(options, list):
            consts = [o for o in options if isinstance(o, Mapping) and "const" in o]  # pyright: ignore[reportUnknownVariableType]
            values = tuple(str(o["const"]) for o in consts)  # pyright: ignore[reportUnknownArgumentType]
            titles = tuple(str(o.get("title", o["const"])) for o in consts)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
            return values, titles
    return (), ()


def _field(name: str, prop: Mapping[str, Any], required: bool) -> ElicitField | None:
    kind = prop.get("type", "string")
    multiple = False
    choices, titles = _choices(prop)
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping):
            return None
        choices, titles = _choices(items)  # pyright: ignore[reportUnknownArgumentType]
        multiple = True
    elif kind not in ("string", "number", "integer", "boolean"):
        return None

    def number(key: str) -> float | None:
        value = prop.get(key)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else None  # type: ignore[arg-type]

    return ElicitField(
        name=name,
        type=str(kind),
        title=str(prop["title"])[:200] if "title" in prop else None,
        description=str(prop["description"])[:MAX_TEXT] if "description" in prop else None,
        required=required,
        default=prop.get("default"),
        has_default="default" in prop,
        choices=choices,
        choice_titles=titles,
        multiple=multiple,
        format=str(prop["format"]) if "format" in prop else None,
        minimum=number("minimum"),
        maximum=number("maximum"),
        min_length=_count(prop, "minLength"),
        max_length=_count(prop, "maxLength"),
        min_items=_count(prop, "minItems"),
        max_items=_count(prop, "maxItems"),
    )


def _count(prop: Mapping[str, Any], key: str) -> int | None:
    value = prop.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
