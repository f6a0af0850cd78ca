"""The warm path: a background holder keeps the servers connected (:mod:`.holder`), and the
client side that finds and asks it (:mod:`.holder_client`).

May import: :mod:`mcpbridge.calls` and the layers below it.
"""
