"""Connections: one server (:class:`.client.Client`, with the helper it owns,
:class:`.features.Features`), every server (:class:`.manager.Manager`), the tool adapter
(:class:`.tool.MCPTool`), failures, servers' requests, resources and prompts, and the
plain-data views of ``mcp list``.

May import: :mod:`mcpbridge.auth`, :mod:`mcpbridge.tools`, :mod:`mcpbridge.transport`.
"""
