"""``python -m codebot_mcp.mcpbridge.warm``: the warm holder (:func:`.holder.main`), started by
``codebot mcp warm``. The collector is paused before the holder's imports (the MCP SDK's), until
it serves (:mod:`core.gcpause`)."""

import sys

from codebot_mcp.core import gcpause

gcpause.hold()

from codebot_mcp.mcpbridge.warm.holder import main  # noqa: E402 - after the pause, on purpose

sys.exit(main(sys.argv[1:]))
