"""Calls from the shell: one tool call (:mod:`.call`), call errors and results
(:mod:`.results`), and the hot path of ``mcp list``/``mcp call`` (:mod:`.lite`).

May import: :mod:`mcpbridge.connection` and the layers below it.
"""
