"""The kernel's tools: the ``Tool`` and ``ToolSource`` protocols (:mod:`.base`), the built-ins
(:mod:`.builtin`), the file tools' boundary (:mod:`.boundary`), ``.gitignore`` rules and
glob matching (:mod:`.gitignore`, :mod:`.globmatch`), a running tool's output as it arrives
(:mod:`.live`), arguments from the command line (:mod:`.arguments`), the servers' resources
for the model (:mod:`.resources`), what a session may ask of its servers (:mod:`.sources`),
what servers may ask of the user (:mod:`.useragent`), the fields of an elicitation form
(:mod:`.forms`), and tool search: deferred MCP tools and the ``search_tools`` built-in
(:mod:`.toolsearch`), what ``bash`` and the loop know of background jobs (:mod:`.background`),
and the registry of the features' tools (:mod:`.featuretools`).

May import: :mod:`core.media`, the service feature :mod:`core.sandbox` (``bash`` runs in
it), :mod:`core.config` and what lies below them.
"""
