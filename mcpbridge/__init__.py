"""Everything that speaks MCP, in layers (top first; ``pyproject.toml`` holds the contract):
:mod:`.serve` (``mcp serve``), :mod:`.doctor` (``mcp doctor``), :mod:`.warm` (the warm
holder and its client), :mod:`.calls` (one call from the shell), :mod:`.connection` (a
server's connection, the Manager, the tool adapter), :mod:`.auth` (OAuth), :mod:`.tools`
(SDK-free tool definitions), :mod:`.transport` (the wire), and :mod:`._sdk` (the SDK's private
parts, fenced).

Importing this package is cheap; the submodules import the ``mcp`` SDK.
"""
