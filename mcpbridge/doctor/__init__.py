"""``codebot mcp doctor``: the run (:mod:`.run`) and its checks (:mod:`.checks`).

May import every other layer of ``mcpbridge``.
"""
