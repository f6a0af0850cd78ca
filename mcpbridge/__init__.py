"""Everything that speaks MCP: connections, the manager, the tool adapter, diagnostics.

Importing this package is cheap; the submodules import the ``mcp`` SDK.
"""
