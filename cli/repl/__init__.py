"""The interactive ``codebot chat``.

- :mod:`.repl_loop`: the loop: input, slash commands, turns, approvals;
  :mod:`.repl_keys`: one-key answers; :mod:`.repl_completion`: tab completion;
- how a turn looks: :mod:`.chatview` (streamed text, tool activity, the status line),
  :mod:`.markdown` (streaming Markdown), :mod:`.preview` (tool results under their call);
- the MCP side: :mod:`.mcp` (servers' requests, ``@server:uri``, prompt commands),
  :mod:`.status` (the ``/mcp`` view), :mod:`.elicit_url` (URL-mode elicitation);
- slash commands: :mod:`.reports` (``/tools``, ``/context``, ``/usage``, diffs),
  :mod:`.repl_rewind` (``/rewind``), :mod:`.repl_skills` (``/skills``), :mod:`.memory`
  (``/memory``, ``/init``), :mod:`.exportfile` (``/export``), :mod:`.welcome` (the first
  screen, ``/model``);
- :mod:`.attach`: images attached to a prompt.

A module whose name would repeat one found elsewhere starts with ``repl_``. May import:
``cli``'s shared modules (render, runtime, signals, login, trustview), ``core`` and
``mcpbridge``; never :mod:`cli.commands` (the ``chat`` command imports the REPL).
"""
