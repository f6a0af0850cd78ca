"""``codebot acp``: codebot as an Agent Client Protocol agent over stdio (Zed, JetBrains,
Neovim...), built on the ``agent-client-protocol`` library.

- :mod:`.agent`: the ACP ``Agent`` (initialize, session/new, session/load, session/prompt,
  session/cancel, session/set_mode) and :func:`serve`, which runs it on stdin/stdout.
- :mod:`.acp_session`: one ACP session: the chat runtime (:mod:`cli.chat_runtime`) held open
  in its own task, its turns, their cancellation, its mode, and approvals sent to the editor.
- :mod:`.acp_updates`: the agent's events (:mod:`core.agent.events`) rendered as
  ``session/update`` notifications, and a saved conversation replayed as them.
- :mod:`.bridge`: the client's ``mcpServers`` as codebot server entries, its ``fs``
  methods as the file tools' :class:`~core.tools.builtin._files.TextFiles`, and its
  ``terminal/*`` methods as ``bash``'s :class:`~core.tools.builtin.bash.Terminals`.

May import: ``cli``'s shared modules, ``core`` and ``mcpbridge``; never :mod:`cli.commands`
(``codebot acp`` imports this package).
"""
