"""The MCP Registry: its ``/v0.1`` read API, the cached catalog, search, and install.

:mod:`.http` (bounded GETs) < :mod:`.serverjson` (the registry's answers as data) <
:mod:`.readapi` (the API) < :mod:`.catalog` (the cache) < :mod:`.serversearch`; :mod:`.inputs`
(questions and answers) < :mod:`.serverinstall` (server.json → settings entry) and
:mod:`.bundle` (MCP bundles); :mod:`.newversions` (a newer version of an installed server, for
doctor). Nothing here speaks MCP or prints: the CLI asks the questions and shows the results,
``core.config.serveredit`` writes the entry.
"""
