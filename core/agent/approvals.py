"""What the approval gate knows of skills: the loaded ones served over MCP whose code the user
has not approved (``core.skills.skillcatalog.SkillActivity`` implements it; the composition
root hands it to the gate).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

__all__ = ["ServedSkill", "SkillApprovals"]


class ServedSkill(Protocol):
    """A skill as the gate names it."""

    @property
    def handle(self) -> str:
        """The name the model uses for it."""
        ...


class SkillApprovals(Protocol):
    """The skills the model loaded, as the gate sees them: while it acts on one served over
    MCP whose code the user has not approved, a call that executes code asks."""

    def unapproved(self) -> Sequence[ServedSkill]:
        """The loaded served skills not approved yet."""
        ...

    def approve(self, skills: Iterable[Any]) -> None:
        """The user approved these (``always``)."""
        ...
