"""A server on the MCP SDK's own ``MCPServer`` that says which trace its tool runs in, server
name "traced_sdk": the proof that a server reading ``params._meta`` (SEP-414) joins codebot's
trace. The SDK's server takes the W3C trace context out of each request's ``_meta`` and makes
it the parent of its own span (``mcp.server._otel``); this process configures no tracer
provider, so that span records nothing but keeps the parent's ids, which the tool reports.

Tool: ``whose_trace()`` answers ``trace <trace id> parent <span id>`` (hex, as the current span
context has them; zeros when the request carried none).

Run: ``python -m tests.servers.traced_sdk`` (stdio) or ``... --http`` (Streamable HTTP on a free
loopback port, ``READY <url>`` on stdout, no auth).
"""

from __future__ import annotations

import argparse
import asyncio

from mcp.server.mcpserver import MCPServer
from opentelemetry import trace

mcp = MCPServer("traced_sdk", version="0.1.0", log_level="WARNING")


@mcp.tool(structured_output=False)
def whose_trace() -> str:
    """Say which trace this call runs in."""
    context = trace.get_current_span().get_span_context()
    return f"trace {context.trace_id:032x} parent {context.span_id:016x}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    if parser.parse_args().http:
        from tests.servers.http_server import serve

        asyncio.run(serve(mcp.streamable_http_app(host="127.0.0.1"), 0))
    else:
        mcp.run("stdio")


if __name__ == "__main__":
    main()
