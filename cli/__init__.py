"""codebot's command line: parse, call into ``core`` and ``mcpbridge``, render. No business logic.

Packages: :mod:`.commands` (every command), :mod:`.repl` (the interactive chat),
:mod:`.acp` (``codebot acp``, the agent for editors).

The entry: :mod:`.app` (the Typer root, errors to exit codes), :mod:`.entry` (the console
script), :mod:`.__main__` (``python -m``).

Shared by the commands, the REPL and ACP:

- :mod:`.runtime`: the command runtime (global options, trusted settings, servers started);
  :mod:`.chat_runtime`: the chat's composition root on top of it, from the parts
  :mod:`.chat_parts` makes;
- :mod:`.render`: errors with hints, tables, JSON; :mod:`.signals`: SIGTERM and SIGHUP as
  Ctrl-C; :mod:`._typer`: every workaround of Typer, fenced;
- :mod:`.answers`: servers' requests answered without a terminal; :mod:`.login` and
  :mod:`.browser`: OAuth logins and opening their URL;
- :mod:`.extensions`: hooks, subagents, custom commands and skills wired into a chat;
- :mod:`.streamjson`: stream-json's events; :mod:`.warm_client`: the client half of the
  warm path, without Typer;
- views: :mod:`.trustview` (the trust review), :mod:`.rewindview` (rewinds),
  :mod:`.skillview` (skills).
"""
