"""The interactive ``codebot chat``: the loop (:mod:`.loop`), completion, the MCP side of the
REPL (server requests, ``@server:uri``, prompt commands), the ``/mcp`` view, reports, images
attached to a prompt (:mod:`.attach`), and how a turn looks (:mod:`.chatview`, :mod:`.markdown`).

May import: ``cli``'s shared modules (render, runtime, signals, login, trustview), ``core``
and ``mcpbridge``; never :mod:`cli.commands` (the ``chat`` command imports the REPL).
"""
