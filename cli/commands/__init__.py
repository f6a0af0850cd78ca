"""The commands: one module per command or command group; the ``mcp`` group is
:mod:`cli.commands.mcp`.

- :mod:`.chat`: ``codebot chat`` (the REPL, or one prompt); its headless runs:
  :mod:`.headless`, and how they report: :mod:`.headless_render`;
- :mod:`.models`: ``codebot models``; :mod:`.export`: ``codebot export``; :mod:`.acp`:
  ``codebot acp``;
- :mod:`.skills_cmd`: ``codebot skills``; :mod:`.trust_cmd`: ``codebot trust``;
  :mod:`.rewind_cmd`: ``codebot rewind``; :mod:`.import_cmd`: ``codebot import``;
  :mod:`.plugin`: ``codebot plugin``;
- :mod:`.shell_completion`: shell completion (``--show-completion``,
  ``--install-completion``, and what completes).

A module that would repeat a name found elsewhere in the repository ends in ``_cmd``
(``skills_cmd`` beside ``core``'s skills modules). A command parses its options, calls into
``core`` and ``mcpbridge`` (through :mod:`cli.runtime`), and renders. May import: ``cli``'s
shared modules, :mod:`cli.repl` (``chat`` opens the REPL) and :mod:`cli.acp`; never the entry
modules (``cli.app``, ``cli.entry``).
"""
