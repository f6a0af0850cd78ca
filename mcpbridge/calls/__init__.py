"""Calls from the shell: the one entry of ``mcp list`` and of ``mcp call``, which chooses the
transport before launch and hands over between them (:mod:`.route`), one tool call
(:mod:`.call`), call errors and results (:mod:`.results`), the hot path of
``mcp list``/``mcp call`` (:mod:`.lite`, its JSON-RPC conversation in :mod:`.lite_wire`),
and ``--continue`` picking running tasks back up (:mod:`.resume`).

May import: :mod:`mcpbridge.connection` and the layers below it.
"""
