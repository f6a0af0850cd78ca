"""Tool definitions, without the SDK: model-visible names (:mod:`.naming`), capability for the
approval gate (:mod:`.capability`), a call's arguments against the input schema
(:mod:`.call_arguments`), pins (:mod:`.tool_pins`, ``.codebot/mcp-lock.json``), and MCP Apps
degraded for a terminal (:mod:`.apps`).

May import: :mod:`mcpbridge.transport` and ``core``.
"""
