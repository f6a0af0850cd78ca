"""The wire: launching and stopping stdio servers (:mod:`.process`, :mod:`.reaper`), the
stdio transport (:mod:`.stdio`), the ``server/discover`` probe (:mod:`.probe`), ``resultType``
defaults (:mod:`.resulttype`), the limits (:mod:`.limits`: time, and the HTTP answer cap of
``core.httpcap`` at MCP's message size), a JSON-RPC error in words (:mod:`.rpcerror`) and one
log file per run (:mod:`.runlog`). :mod:`.wire` holds what the SDK path and the SDK-free hot
path share (framing, protocol constants, the era decision, the tool filter, what codebot
declares): it imports no SDK; :mod:`.stdio`, :mod:`.probe` and :mod:`.resulttype` wrap the
SDK's streams.

The bottom layer of ``mcpbridge``: may import ``core`` and the SDK, nothing of the bridge.
"""
