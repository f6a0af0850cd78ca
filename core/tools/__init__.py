"""Tools: the ``Tool`` and ``ToolSource`` protocols (:mod:`.base`), the built-ins
(:mod:`.builtin`), a running tool's output as it arrives (:mod:`.live`), arguments from
the command line (:mod:`.arguments`), the servers'
resources for the model (:mod:`.resources`), what a session may ask of its servers
(:mod:`.sources`), what servers may ask of the user (:mod:`.useragent`), and skills: the
catalog of local and served ones (:mod:`.skills`) and loading them (:mod:`.skillload`),
and tool search: deferred MCP tools and the ``search_tools`` built-in (:mod:`.toolsearch`).

May import: :mod:`core.security`, :mod:`core.config` and what lies below them.
"""
