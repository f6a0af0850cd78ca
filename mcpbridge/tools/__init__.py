"""Tool definitions, without the SDK: model-visible names (:mod:`.naming`), capability for the
approval gate (:mod:`.capability`), argument checks (:mod:`.arguments`), and pins
(:mod:`.pinning`, ``.codebot/mcp-lock.json``).

May import: :mod:`mcpbridge.transport` and ``core``.
"""
