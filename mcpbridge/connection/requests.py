"""Server-to-client requests: elicitation, sampling, roots, and log messages.

One :class:`ServerRequests` per server registers the SDK callbacks (passing them is what
declares the ``elicitation``, ``sampling`` and ``roots`` capabilities). The same callbacks
answer the requests a 2026-07-28 server embeds in an ``InputRequiredResult`` (SEP-2322): the
SDK retries the call with the answers and the echoed ``requestState``. Each request becomes
plain data for a :class:`core.tools.useragent.UserAgent`; nothing here talks to the terminal.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.tools.forms import MAX_TEXT, NOT_A_FORM, form_fields
from codebot_mcp.core.tools.useragent import (
    MAX_SAMPLING_TOKENS,
    NO_SAMPLER,
    ElicitRequest,
    Sampling,
    SamplingRefusedError,
    SamplingRequest,
    UserAgent,
    refusal_reason,
)
from codebot_mcp.mcpbridge.transport.runlog import ServerLog
from codebot_mcp.mcpbridge.transport.wire import MAX_INPUT_ROUNDS, USER_REJECTED

__all__ = ["USER_REJECTED", "ServerRequests", "form_fields"]


class ServerRequests:
    """The callbacks for one server.

    Args:
        server: The server's name (every request is shown under it).
        agent: Who answers (the REPL, or the non-interactive policy).
        sampler: Sends approved sampling requests to the model; None refuses them all.
        log: Writes the server's log messages to its log file (the hot path's writer too).
    """

    def __init__(
        self,
        server: str,
        agent: UserAgent,
        sampler: Sampling | None = None,
        log: ServerLog | None = None,
    ) -> None:
        self.server = server
        self.agent = agent
        self.sampler = sampler
        self.log = log

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
                return types.ErrorData(code=types.INVALID_PARAMS, message=NOT_A_FORM)
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
            return _refuse(NO_SAMPLER)
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
        except SamplingRefusedError as exc:
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
        if self.log is not None:
            self.log.write(params.level, params.logger, params.data)


def _refuse(reason: str) -> types.ErrorData:
    return types.ErrorData(code=USER_REJECTED, message=f"sampling refused: {reason}")


def _sampling_text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'unknown')} content]")
    return "\n".join(parts)[: MAX_TEXT * 10]
