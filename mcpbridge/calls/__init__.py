"""Calls from the shell: one tool call (:mod:`.call`), call errors and results
(:mod:`.results`), the hot path of ``mcp list``/``mcp call`` (:mod:`.lite`, its JSON-RPC
conversation in :mod:`.lite_wire`), and ``--continue`` picking running tasks back up
(:mod:`.resume`).

May import: :mod:`mcpbridge.connection` and the layers below it.
"""
