"""The wire: launching and stopping stdio servers (:mod:`.process`, :mod:`.reaper`), the
stdio transport, the HTTP size cap, the ``server/discover`` probe, ``resultType`` defaults,
and the time limits. :mod:`.wire` holds what the SDK path and the SDK-free hot path share
(framing, protocol constants, the era decision, the tool filter, what codebot declares): it
imports no SDK; :mod:`.stdio`, :mod:`.probe` and :mod:`.resulttype` wrap the SDK's streams.

The bottom layer of ``mcpbridge``: may import ``core`` and the SDK, nothing of the bridge.
"""
