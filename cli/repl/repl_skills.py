"""``/skills``: the skills the model may load, listed again from the servers; ``/skills NAME``
shows one as the model would get it, without putting it in the conversation."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from codebot_mcp.cli import render
from codebot_mcp.cli.skillview import catalog_text, loaded_header, loaded_text
from codebot_mcp.core.errors import CodebotError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime


async def show_skills(runtime: ChatRuntime, name: str) -> None:
    """``/skills`` (every skill, with its origin) or ``/skills NAME`` (its body and files)."""
    catalog = runtime.skills
    if catalog is None:
        print("(no skills)")
        return
    if not name:
        await runtime.session.refresh_skills()  # entries only: no skill file is read
        print(catalog_text(catalog))
        return
    loader = runtime.skill_loader
    if loader is None:
        print("(no skills)")
        return
    try:
        skill = await catalog.resolve(name)
        loaded = await loader.load(skill)
    except CodebotError as exc:
        render.error(exc)
        return
    print(loaded_header(loaded), file=sys.stderr)
    print(loaded_text(loaded, with_files=False))
    for ref in loaded.files:
        print(render.safe(f"  file: {ref.path} ({ref.size} bytes)", one_line=True))
