"""``codebot mcp doctor``: the run (:mod:`.run`) and its checks (:mod:`.checks`).

May import every layer of ``mcpbridge`` below it, and ``core`` below the agent (the tool
schema, estimates and tool search it counts with live in ``core.tools`` and ``core.model``).
"""
