"""Sampling: a server's ``sampling/createMessage`` answered by the session's model.

Never silent: the bridge asks the :class:`core.useragent.UserAgent` first. Here the request is
capped (per server per turn, and in tokens), sent, and its usage counted with the turn's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codebot_mcp.core.model.stream import Usage
from codebot_mcp.core.tools.useragent import (
    MAX_SAMPLING_PER_TURN,
    MAX_SAMPLING_TOKENS,
    NO_MODEL,
    Sample,
    SamplingRefusedError,
)

if TYPE_CHECKING:
    from codebot_mcp.core.model.client import ChatModel


@dataclass
class ModelRef:
    """The model a chat's turns use now, shared by its agent (which swaps it: ``/model``, a
    custom command's ``model:``) and its sampler (which answers the servers with it).
    Made with the model, before the servers' manager; None: no model is configured yet."""

    model: ChatModel | None = None

    def __call__(self) -> ChatModel | None:
        """The model now (a :class:`Sampler`'s ``model``)."""
        return self.model


@dataclass
class Sampler:
    """Sends approved sampling requests to the session's model (the bridge holds it as a
    :class:`core.tools.useragent.Sampling`).

    Args:
        model: Returns the current model (it may change on ``/mcp reload``), or None.
        per_turn: Requests one server may make per turn.
    """

    model: Callable[[], ChatModel | None]
    per_turn: int = MAX_SAMPLING_PER_TURN
    usage: Usage = field(default_factory=Usage)
    """Tokens spent on sampling since the last :meth:`take_usage`."""
    _counts: dict[str, int] = field(default_factory=dict[str, int])

    def begin_turn(self, usage: Usage | None = None) -> None:
        """A new user turn: every server's count starts again; tokens go to ``usage``."""
        self._counts.clear()
        if usage is not None:
            self.usage = usage

    def take_usage(self) -> Usage:
        """The usage since the last call (and reset it)."""
        usage, self.usage = self.usage, Usage()
        return usage

    def check(self, server: str) -> None:
        """Raise :class:`SamplingRefusedError` when ``server`` used its requests this turn."""
        if self._counts.get(server, 0) >= self.per_turn:
            raise SamplingRefusedError(
                f"server '{server}' reached its limit of {self.per_turn} sampling requests "
                "for this turn"
            )

    async def sample(
        self,
        server: str,
        messages: list[dict[str, str]],
        system_prompt: str | None,
        max_tokens: int,
    ) -> Sample:
        """Send one request; raises :class:`SamplingRefusedError` (no model, cap reached) or
        ``ModelError``.
        """
        self.check(server)
        model = self.model()
        if model is None:
            raise SamplingRefusedError(NO_MODEL)
        self._counts[server] = self._counts.get(server, 0) + 1
        request = [{"role": "system", "content": system_prompt}] if system_prompt else []
        request += messages
        reply = await model.complete(request, max_tokens=min(max_tokens, MAX_SAMPLING_TOKENS))
        self.usage.add(reply.usage)
        return Sample(reply.text, model.config.model, _stop_reason(reply.finish_reason))


def _stop_reason(finish: str | None) -> str | None:
    return {"stop": "endTurn", "length": "maxTokens"}.get(finish or "", finish)
