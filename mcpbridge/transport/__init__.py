"""The wire: launching and stopping stdio servers (:mod:`.process`, :mod:`.reaper`), the
stdio transport, the HTTP size cap, the ``server/discover`` probe, ``resultType`` defaults,
and the time limits.

The bottom layer of ``mcpbridge``: may import ``core`` and the SDK, nothing of the bridge.
"""
