"""A failed call is one record (``CallFailure``), worded once where the bridge meets the
server, and rendered by each reader: ``mcp call`` raises :meth:`CallFailure.error`, the model
reads :meth:`CallFailure.for_model`. The words pinned here are the ones users saw before."""

from __future__ import annotations

from pathlib import Path

import pytest

from codebot_mcp.core.config.servers import parse_server
from codebot_mcp.core.errors import ExitCode
from codebot_mcp.mcpbridge.connection.failures import call_failure
from codebot_mcp.mcpbridge.transport import wire

CONFIG = parse_server(
    "s", {"command": "x", "tool_timeout": 5}, Path("/p/settings.json"), {}, Path("/p")
)


@pytest.mark.parametrize(
    ("code", "restarts", "oversized", "kind", "exit_code", "message", "model"),
    [
        (
            wire.REQUEST_TIMEOUT, True, False, "timeout", ExitCode.SERVER,
            "'t' on server 's' gave no answer within 5 s",
            "'t' on server 's' gave no answer within 5 s",
        ),
        (
            wire.CONNECTION_CLOSED, True, False, "closed", ExitCode.SERVER,
            "server 's' closed the connection during 't' (it exited or crashed)",
            "server 's' closed the connection during the call (it exited). The next call "
            "restarts it.",
        ),
        (
            wire.CONNECTION_CLOSED, False, False, "closed", ExitCode.SERVER,
            "server 's' closed the connection during 't' (it exited or crashed)",
            "server 's' closed the connection during the call (it exited).",
        ),
        (
            wire.CONNECTION_CLOSED, True, True, "oversized", ExitCode.SERVER,
            "server 's' sent an answer to 't' larger than 32 MB; it was dropped",
            "server 's' sent an answer larger than 32 MB; it was dropped",
        ),
        (
            wire.USER_REJECTED, True, False, "refused", ExitCode.TOOL_ERROR,
            "'t' on server 's' could not finish: no",
            "server 's' answered an error: no (MCP error -1)",
        ),
        (
            42, True, False, "rejected", ExitCode.SERVER,
            "server 's' rejected the call to 't': boom (MCP error 42)",
            "server 's' answered an error: boom (MCP error 42)",
        ),
    ],
)  # fmt: skip
def test_one_record_two_renderings(
    code: int,
    restarts: bool,
    oversized: bool,
    kind: str,
    exit_code: int,
    message: str,
    model: str,
) -> None:
    text = "no" if code == wire.USER_REJECTED else "boom"
    failure = call_failure(code, text, CONFIG, "t", restarts=restarts, oversized=oversized)
    assert (failure.kind, failure.stage, failure.server, failure.tool) == (kind, "call", "s", "t")
    error = failure.error()
    assert (error.message, error.exit_code) == (message, exit_code)
    assert error.hint == failure.hint
    assert failure.for_model() == model


def test_a_result_the_schema_rejects_is_one_record_on_both_paths() -> None:
    """The hot path reads a result it cannot read itself with the SDK's models
    (``results.read_by_sdk``); what it raises is the SDK path's record for the same
    ``ValidationError`` (``explain_call``): the same kind, message, hint and exit code."""
    from pydantic import ValidationError

    from codebot_mcp.core.errors import CodebotError
    from codebot_mcp.mcpbridge.auth import AuthTrace
    from codebot_mcp.mcpbridge.calls.results import read_by_sdk, read_call_result
    from codebot_mcp.mcpbridge.connection.explain import explain_call

    bad = {"content": [{"type": "bogus"}]}
    with pytest.raises(CodebotError) as hot:
        read_by_sdk(bad, CONFIG, "t", version=wire.LEGACY_VERSION)
    with pytest.raises(ValidationError) as raised:
        read_call_result(bad, wire.LEGACY_VERSION, ())
    sdk = explain_call(
        raised.value,
        CONFIG,
        "t",
        model_name="mcp__s__t",
        redact=str,
        restarts=True,
        oversized=False,
        trace=AuthTrace(),
    )
    error = sdk.error()
    assert sdk.kind == "invalid" and "does not follow the MCP schema" in error.message
    assert (hot.value.message, hot.value.hint, hot.value.exit_code) == (
        error.message,
        error.hint,
        error.exit_code,
    )
