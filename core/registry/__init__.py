"""The MCP Registry: its ``/v0.1`` read API, the cached catalog, search, and install.

``http`` (bounded GETs) < ``serverjson`` (the registry's answers as data) < ``client`` (the
API) < ``catalog`` (the cache) < ``search``; ``inputs`` (questions and answers) < ``install``
(server.json → settings entry) and ``bundle`` (MCP bundles). Nothing here speaks MCP or
prints: the CLI asks the questions and shows the results, ``core/config/edit`` writes the
entry.
"""
