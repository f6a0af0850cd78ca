"""How non-interactive commands answer servers' requests (``--elicit``, ``--allow-sampling``),
and the model they sample with when there is no chat."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codebot_mcp.core.errors import ModelError, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.model.client import ChatModel
    from codebot_mcp.core.tools.useragent import Policy


def policy(settings: Settings, elicit: str | None, allow_sampling: list[str] | None) -> Policy:
    """The non-interactive answers to servers' requests (``--elicit``, ``--allow-sampling``).

    Raises:
        UsageError: ``--elicit`` names no known mode.
    """
    from codebot_mcp.core.config.settings import root_dirs
    from codebot_mcp.core.tools.useragent import ELICIT_MODES, Policy

    mode = elicit or "decline"
    if mode not in ELICIT_MODES:
        raise UsageError(
            f"--elicit {mode}: unknown answer", hint=f"Use one of {', '.join(ELICIT_MODES)}."
        )
    return Policy(
        mode,  # type: ignore[arg-type]
        frozenset(allow_sampling or ()),
        root_dirs(settings.project_root, settings.cwd, settings.roots),
    )


class LazyModel:
    """The model for sampling in commands without a chat: built on first use, closed after."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model: ChatModel | None = None
        self.error: str | None = None

    def __call__(self) -> ChatModel | None:
        """The model, or None (with ``error`` set) when none is configured."""
        if self.model is None and self.error is None:
            from codebot_mcp.core.model.client import ChatModel, create_client
            from codebot_mcp.core.model.config import resolve_config
            from codebot_mcp.core.model.localservers import settle_model

            try:
                config, _ = settle_model(resolve_config(self.settings))
            except ModelError as exc:
                self.error = exc.message
                return None
            self.model = ChatModel(create_client(config), config)
        return self.model

    async def aclose(self) -> None:
        """Close the model's HTTP client, if one was made."""
        if self.model is not None:
            await self.model.aclose()
