"""Connections: one server and what it does for codebot.

- :mod:`.mcp_client`: one server's connection (:class:`~.mcp_client.Client`), with the helper
  it owns, :mod:`.features` (requests, log, progress, change flags); :mod:`.serverinfo`: what
  codebot tells a server and what the handshake told us;
- :mod:`.manager`: every server, as one tool source; :mod:`.tool`: ``MCPTool``, one remote
  tool as core's ``Tool``;
- :mod:`.failures` and :mod:`.explain`: why a server is not usable, in words with a fix;
- :mod:`.requests`: what a server asks of us (elicitation, sampling, roots, logs);
- :mod:`.remote_resources`: a server's resources, prompts and completions as core's data;
  :mod:`.remote_skills`: the skills a server serves (SEP-2640);
- :mod:`.tasks`: calls answered with a task (SEP-2663), and :mod:`.taskpolicy`, the run's
  policy for them;
- :mod:`.report`: the plain-data views of ``mcp list`` and ``mcp doctor``, of either
  transport through :mod:`.contract` (a listed tool, a reached server, the handshake's facts).

``manager``, ``failures``, ``contract``, ``report`` and ``taskpolicy`` load no SDK module:
the SDK loads with the first server a run starts, so ``chat`` without MCP servers never
imports it.

May import: :mod:`mcpbridge.auth`, :mod:`mcpbridge.tools`, :mod:`mcpbridge.transport`.
"""
