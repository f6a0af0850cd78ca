"""Connections: one server (:class:`.client.Client`, with the helper it owns,
:class:`.features.Features`), every server (:class:`.manager.Manager`), the tool adapter
(:class:`.tool.MCPTool`), failures and their explanations, tasks and the run's task policy,
servers' requests, resources and prompts, and the plain-data views of ``mcp list``.

``manager``, ``failures`` and ``taskpolicy`` load no SDK module: the SDK loads with the first
server a run starts, so ``chat`` without MCP servers never imports it.

May import: :mod:`mcpbridge.auth`, :mod:`mcpbridge.tools`, :mod:`mcpbridge.transport`.
"""
