"""``codebot mcp ...``: the group and one module per command or family of commands.

- :mod:`.group`: the group, ``list`` and ``call``, and registering the rest; :mod:`.common`:
  the options and server start-up they share; :mod:`.views`: the text view of ``list``;
- :mod:`.warm`: ``mcp warm`` and the warm path of ``list``/``call``;
- :mod:`.manage`: ``add``, ``add-json``, ``remove``, ``enable``, ``disable``; :mod:`.get`:
  ``get``; :mod:`.mcp_import`: ``import``; :mod:`.mcp_install`: ``install``;
  :mod:`.mcp_search`: ``search``; :mod:`.lock`: ``lock``; :mod:`.auth`: ``login``/``logout``;
- :mod:`.mcp_resources`: ``resources``/``read``; :mod:`.prompts`: ``prompts``/``prompt``;
- :mod:`.doctor`: ``doctor``, rendered by :mod:`.doctor_render` (text, JSON, JUnit) and
  :mod:`.doctor_sarif` (SARIF);
- :mod:`.serve`: ``mcp serve``.

A module whose name would repeat one found elsewhere starts with ``mcp_`` (``mcp_install``
for ``codebot mcp install``, beside ``core.registry.install``). May import what
:mod:`cli.commands` may.
"""
