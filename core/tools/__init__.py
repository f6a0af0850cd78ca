"""Tools: the ``Tool`` and ``ToolSource`` protocols (:mod:`.base`), the built-ins
(:mod:`.builtin`), arguments from the command line (:mod:`.arguments`), the servers'
resources for the model (:mod:`.resources`), what a session may ask of its servers
(:mod:`.sources`) and what servers may ask of the user (:mod:`.useragent`).

May import: :mod:`core.security`, :mod:`core.config` and what lies below them.
"""
