"""The model's settings section: which model, where it is served, and how much it may say.

``model``, ``base_url``, ``api_key_env``, ``api``, ``reasoning_effort``, ``max_tokens``,
``model_retries``, ``context_window`` and ``model_aliases``, as the model client
(``core.model``) reads them from ``Settings``. Each is a field of :func:`section_model`
(its help, type and example: the schema and the docs) and a row checked by the generic
checker of :mod:`.keys` from the field's type, values and bounds (the errors users see).
Every key is gated: an untrusted project's endpoint or limits never apply.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Literal

from codebot_mcp.core.config.keys import DEFAULT_MAX_TOKENS, aliases, check
from codebot_mcp.core.config.sections import NOT_SET, Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["section_model"]


@cache
def section_model() -> type[BaseModel]:
    """The model's keys as a pydantic model (built on demand: see :mod:`.sections`)."""
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    positive = Annotated[int, Field(ge=1)]

    class ModelSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        model: str | None = Field(
            default=None, description="The model name sent to the API.", examples=["gpt-4o"]
        )
        base_url: Annotated[str, Field(pattern="^https?://")] | None = Field(
            default=NOT_SET,
            description="The OpenAI-compatible endpoint (where the API key is sent).",
            examples=["http://localhost:11434/v1"],
        )
        api_key_env: Annotated[str, Field(pattern="^[A-Za-z_][A-Za-z0-9_]*$")] | None = Field(
            default=NOT_SET,
            description="The environment variable holding the API key.",
            examples=["MY_API_KEY"],
        )
        api: Literal["chat_completions", "responses"] | None = Field(
            default=NOT_SET,
            description='The wire format of the model API: "chat_completions" or "responses" '
            "(default: responses for a reasoning model at api.openai.com, else "
            "chat_completions).",
            examples=["responses"],
        )
        reasoning_effort: Literal["low", "medium", "high"] | None = Field(
            default=NOT_SET,
            description='How hard a reasoning model thinks: "low", "medium" or "high" '
            "(default: the model's own).",
            examples=["high"],
        )
        max_tokens: positive = Field(
            default=DEFAULT_MAX_TOKENS,
            description="Output tokens per model turn (sent as max_tokens).",
            examples=[4096],
        )
        model_retries: Annotated[int, Field(ge=0)] = Field(
            default=NOT_SET,  # not set: chosen by endpoint (a null in the file is an error)
            description="Retries of a failed model request (default: 2 for remote APIs, 0 "
            "for loopback).",
            examples=[0],
        )
        context_window: positive = Field(
            default=NOT_SET,  # not set: from the known models
            description="The model's context window in tokens (default: from the known "
            "models, or 128k).",
            examples=[32_768],
        )
        model_aliases: dict[str, Annotated[str, Field(min_length=1)]] = Field(
            default_factory=dict[str, str],
            description="Models for the Claude model names and aliases in agent and command "
            'files ("sonnet", "claude-opus-4-1"...); a name not listed means your model.',
            examples=[{"sonnet": "gpt-4o", "haiku": "gpt-4o-mini"}],
        )

    return ModelSection


register(
    Section(
        "model",
        (
            row("model", check),
            row("base_url", check),
            row("api_key_env", check),
            row("api", check),
            row("reasoning_effort", check),
            row("max_tokens", check),
            row("model_retries", check),
            row("context_window", check),
            row("model_aliases", aliases),
        ),
        section_model,
        order=10,
    )
)
