"""Approvals of ``codebot mcp serve``: a call that would ask in ``chat`` asks the MCP client.

The permission gate is ``chat``'s own (:class:`core.agent.permissions.PermissionGate`: the same
settings rules, ``--yes``, ``--allow``, the project-root boundary). Its approver here is an
:class:`ElicitingApprover`, which asks whoever sent the current request, the way that client
can be asked:

- a handshake-era client (2025-xx) that declared ``elicitation``: an ``elicitation/create``
  request in the middle of the call;
- a 2026-07-28 client that declared it in the request's capabilities: the call answers with an
  ``InputRequiredResult`` (SEP-2322) holding the question, and the client calls again with
  the answer (``inputResponses``) and the sealed ``requestState`` (the SDK's
  ``RequestStateBoundary`` seals and checks it, bound to this request);
- a client that declared no elicitation: nobody can be asked, so the call is refused with the
  reason and the fix (:class:`CannotAsk`), never run.

Which of these applies is per request (:func:`asking`), kept in a context variable that the
tasks a call starts (``ask``'s nested session) inherit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types
from mcp.server.session import ServerSession

from codebot_mcp.core.agent.permissions import Answer, ApprovalRequest

MAX_ARGUMENTS_SHOWN = 2000
"""Characters of a call's arguments shown in the question (a whole file to write is cut)."""
MAX_PREVIEW_SHOWN = 4000
"""Characters of a preview (the diff of an edit) shown in the question."""
DECISION = "decision"
CHOICES = (
    ("once", "Allow once"),
    ("always", "Allow for the rest of this session"),
    ("no", "Deny"),
)
Mode = Literal["elicit", "input_required", "none"]


class CannotAskError(Exception):
    """The call needs approval and the client declared no way to be asked."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(request.reason)
        self.request = request


class NeedsAnswerError(Exception):
    """A 2026-07-28 call needs approval: answer it with :meth:`ElicitingApprover.question`."""

    def __init__(self, key: str, request: ApprovalRequest) -> None:
        super().__init__(key)
        self.key = key
        self.request = request


@dataclass
class Asking:
    """How the client of the current request can be asked (see the module docstring)."""

    mode: Mode
    session: ServerSession | None = None
    request_id: types.RequestId | None = None
    responses: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """``inputResponses`` of a 2026-07-28 retry, by key."""
    state: str | None = None
    """The unsealed ``requestState`` of that retry (what :meth:`question` minted)."""

    @property
    def interactive(self) -> bool:
        """Something can be asked in the middle of a running call (a handshake-era client)."""
        return self.mode == "elicit"


_ASKING: ContextVar[Asking | None] = ContextVar("codebot_serve_asking", default=None)


@contextmanager
def asking(how: Asking) -> Iterator[None]:
    """Within, the approver asks the client ``how`` says (for one request)."""
    token = _ASKING.set(how)
    try:
        yield
    finally:
        _ASKING.reset(token)


def current() -> Asking:
    """How the client of the request being served can be asked (outside a request: not)."""
    return _ASKING.get() or Asking("none")


def elicitation_declared(caps: types.ClientCapabilities | None) -> bool:
    """The client can answer a form: ``elicitation`` with ``form`` (or, before 2025-11-25,
    an empty ``elicitation`` object, which meant form)."""
    declared = caps.elicitation if caps is not None else None
    if declared is None:
        return False
    return declared.form is not None or declared.url is None


def answer_key(request: ApprovalRequest) -> str:
    """The ``inputRequests`` key of one approval: the same call gets the same key."""
    text = json.dumps([request.tool, dict(request.arguments)], sort_keys=True, default=str)
    return "approve-" + hashlib.sha256(text.encode()).hexdigest()[:16]


class ElicitingApprover:
    """``PermissionGate``'s approver in ``mcp serve``: asks the client of the current request."""

    async def __call__(self, request: ApprovalRequest) -> Answer:
        how = current()
        if how.mode == "none":
            raise CannotAskError(request)
        if how.mode == "elicit":
            assert how.session is not None
            result = await how.session.elicit_form(
                question_text(request), question_schema(), how.request_id
            )
            return to_answer(result.action, result.content)
        key = answer_key(request)
        raw = how.responses.get(key)
        if raw is None or how.state != _state(key):
            raise NeedsAnswerError(key, request)
        try:
            result = types.ElicitResult.model_validate(raw)
        except ValueError:
            return Answer.NO  # an answer we cannot read is no approval
        return to_answer(result.action, result.content)

    @staticmethod
    def question(needs: NeedsAnswerError) -> types.InputRequiredResult:
        """The ``InputRequiredResult`` that asks a 2026-07-28 client about one call."""
        params = types.ElicitRequestFormParams(
            message=question_text(needs.request), requested_schema=question_schema()
        )
        return types.InputRequiredResult(
            input_requests={needs.key: types.ElicitRequest(params=params)},
            request_state=_state(needs.key),
        )


def _state(key: str) -> str:
    return json.dumps({"approve": key})


def to_answer(action: str, content: Mapping[str, Any] | None) -> Answer:
    """The gate's answer from the client's: only an accepted "once"/"always" approves."""
    if action != "accept" or not content:
        return Answer.NO
    decision = content.get(DECISION)
    if decision == "once":
        return Answer.ONCE
    if decision == "always":
        return Answer.ALWAYS
    return Answer.NO


def question_schema() -> dict[str, Any]:
    """One required choice, no default (a client that fills defaults must not approve)."""
    return {
        "type": "object",
        "properties": {
            DECISION: {
                "type": "string",
                "title": "Decision",
                "oneOf": [{"const": value, "title": title} for value, title in CHOICES],
            }
        },
        "required": [DECISION],
    }


def question_text(request: ApprovalRequest) -> str:
    """What the client shows: the tool, why codebot asks, the call, what it would change."""
    arguments = json.dumps(dict(request.arguments), ensure_ascii=False, default=str)
    if len(arguments) > MAX_ARGUMENTS_SHOWN:
        arguments = arguments[:MAX_ARGUMENTS_SHOWN] + f"... ({len(arguments)} characters)"
    lines = [
        f"codebot asks: may '{request.tool}' run?",
        f"Why it asks: {request.reason}",
        f"Arguments: {arguments}",
    ]
    if request.detail:
        lines.append(f"It reaches: {request.detail}")
    if request.preview:
        preview = request.preview
        if len(preview) > MAX_PREVIEW_SHOWN:
            preview = preview[:MAX_PREVIEW_SHOWN] + "\n... (cut)"
        lines += ["It would change:", preview]
    return "\n".join(lines)


def refusal_text(request: ApprovalRequest, *, why: str) -> str:
    """The error result of a call nobody could approve: what, why, and the fix."""
    return (
        f"codebot refused '{request.tool}': it needs approval ({request.reason}), and {why}. "
        f"Start `codebot mcp serve` with --allow '{request.tool}' (or --yes), or add "
        f'"{request.tool}" to "permissions": {{"allow": [...]}} in the settings, to let it '
        "run without asking."
    )
