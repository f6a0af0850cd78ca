"""The warm path: a background holder keeps the servers connected (:mod:`.holder`, started as
``python -m codebot_mcp.mcpbridge.warm``: :mod:`.__main__`), the client
side that finds and asks it (:mod:`.holder_client`), and a warm call resolved from the client's
settings in the holder (:mod:`.callhere`).

May import: :mod:`mcpbridge.calls` and the layers below it.
"""
