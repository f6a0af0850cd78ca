"""Claude Code plugins: reading a plugin folder, the record of installed plugins, and what
the enabled ones add to a session.

- :mod:`.manifest` reads a plugin folder (``.claude-plugin/plugin.json`` and the default
  folders ``commands/``, ``agents/``, ``skills/``, ``hooks/hooks.json``, ``.mcp.json``) and
  lists everything it runs (hooks, servers, ``!`cmd``` lines, scripts) with a digest;
- :mod:`.pluginstore` is the record of installed plugins and marketplaces (codebot's state) and the
  cache they are copied into (codebot's data directory);
- :mod:`.load` gives what the enabled plugins add: MCP servers (``plugin_NAME_SERVER``),
  hooks, and definition folders (commands ``/NAME:cmd``, agents, skills).

Installing (fetching, marketplaces, asking) is :mod:`core.plugins`' job; this package is only
what settings loading needs, so it sits in ``config``.
"""
