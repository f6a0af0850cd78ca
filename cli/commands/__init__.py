"""The commands: one module per command group (``chat``, ``models``, ``trust``, ``completion``,
and the ``mcp`` group in :mod:`cli.commands.mcp`).

A command parses its options, calls into ``core`` and ``mcpbridge`` (through
:mod:`cli.runtime`), and renders. May import: ``cli``'s shared modules and :mod:`cli.repl`
(``chat`` opens the REPL); never the entry modules (``cli.app``, ``cli.entry``).
"""
