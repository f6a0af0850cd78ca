"""Whatever a transport or the SDK raised, as one sentence and a hint that names the settings
key to change: for a server (:func:`explain`, :func:`explain_auth`) and for one call
(:func:`explain_call`, the :class:`~.failures.CallFailure` every reader renders). Messages never
carry header or env values; URLs are shown with credentials removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio
import httpx2
import mcp_types as types
from mcp import InputRequiredRoundsExceededError, MCPError
from pydantic import ValidationError

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.mcpbridge.auth import AuthTrace, GrantError, LoginError, NeedsLoginError
from codebot_mcp.mcpbridge.auth.auth_errors import MAX_ANSWER_CHARS
from codebot_mcp.mcpbridge.connection.failures import (
    CallFailure,
    call_failure,
    closed_early,
    invalid_result,
    output_schema_failure,
    too_many_rounds_failure,
)
from codebot_mcp.mcpbridge.transport.process import LaunchError
from codebot_mcp.mcpbridge.transport.rpcerror import rpc_error_text


def _leaves(exc: BaseException) -> Sequence[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def explain(exc: BaseException, config: ServerConfig) -> tuple[str, str | None]:
    """A readable reason and a hint for an exception raised while talking to a server."""
    leaves = _leaves(exc)
    leaf = next((e for e in leaves if not isinstance(e, anyio.get_cancelled_exc_class())), exc)
    where = f"server '{config.name}' in {config.source}"
    if isinstance(leaf, LaunchError):
        return leaf.message, leaf.hint
    if isinstance(leaf, httpx2.ConnectError) and ("SSL" in str(leaf) or "TLS" in str(leaf)):
        return (
            f"TLS failed talking to {config.url}: {leaf}",
            f"If the server speaks plain HTTP, use http:// in the 'url' of {where}; if its "
            "certificate is self-signed, add it to the system's trust store.",
        )
    if isinstance(leaf, httpx2.ConnectError):
        return (
            f"cannot connect to {config.url}: {leaf}",
            f"Check that the server is running and the 'url' of {where} is right.",
        )
    if isinstance(leaf, httpx2.TimeoutException):
        return f"the HTTP request to {config.url} timed out", f"Check the 'url' of {where}."
    if isinstance(leaf, httpx2.HTTPError):
        return f"HTTP error talking to {config.url}: {leaf}", f"Check the 'url' of {where}."
    if isinstance(leaf, MCPError):
        return _explain_mcp_error(leaf, config)
    if isinstance(leaf, PermissionError):
        return f"cannot start '{config.command}': permission denied", (
            f"Make it executable (chmod +x), or fix 'command' of {where}."
        )
    if isinstance(leaf, FileNotFoundError | NotADirectoryError):
        return f"cannot start '{config.command}': {leaf.strerror or leaf}", (
            f"Fix 'command' or 'cwd' of {where}."
        )
    text = str(leaf) or type(leaf).__name__
    return f"{type(leaf).__name__}: {text}", None


@dataclass(frozen=True, slots=True)
class AuthProblem:
    """Why authorization failed, and whether a login would fix it."""

    message: str
    hint: str | None
    needs_login: bool = False


def login_hint(config: ServerConfig) -> str:
    """How to log in to this server."""
    return (
        f"Run `codebot mcp login {config.name}`, or pass --login to run the browser flow "
        "when it is needed."
    )


def explain_auth(
    exc: BaseException | None, config: ServerConfig, trace: AuthTrace
) -> AuthProblem | None:
    """The auth failure behind ``exc``, decided from the HTTP statuses seen, or None."""
    from mcp.client.auth import OAuthFlowError, OAuthTokenError

    leaves = _leaves(exc) if exc is not None else []
    where = f"server '{config.name}' in {config.source}"
    oauth = config.oauth
    grant_error = next((e for e in leaves if isinstance(e, GrantError)), None)
    if grant_error is not None:  # a browserless grant or DPoP: its own message names all
        return AuthProblem(grant_error.message, grant_error.hint)
    token_error = next((e for e in leaves if isinstance(e, OAuthTokenError)), None)
    if token_error is not None and oauth.grant == "identity_assertion":
        return AuthProblem(
            f"the identity_assertion grant of server '{config.name}' was refused by "
            f"authorization server '{trace.auth_server}': "
            f"{' '.join(str(token_error).split())[:MAX_ANSWER_CHARS]}",
            f"Check 'oauth.client_id' and 'oauth.client_secret' of {where} (the ID-JAG's "
            "client must be the one that authenticates); codebot does not retry.",
        )
    if any(isinstance(e, LoginError) for e in leaves):
        leaf = next(e for e in leaves if isinstance(e, LoginError))
        return AuthProblem(f"login failed: {leaf}", login_hint(config), needs_login=True)
    if trace.needs_login or any(isinstance(e, NeedsLoginError) for e in leaves):
        return AuthProblem(
            f"{config.url} needs authorization: the stored login expired or the server asks "
            "for more scope",
            login_hint(config),
            needs_login=True,
        )
    flow_error = next((e for e in leaves if isinstance(e, OAuthFlowError)), None)
    if flow_error is not None:
        hint = (
            f"Check 'oauth.client_id', 'oauth.client_secret' / 'oauth.private_key' of {where}."
            if oauth.grant == "client_credentials"
            else f"Check 'oauth' of {where}."
            if oauth.browserless
            else login_hint(config)
        )
        return AuthProblem(f"OAuth failed: {flow_error}", hint)
    if trace.status == 401:
        if not oauth.enabled:
            return AuthProblem(
                f"{config.url} answered 401 Unauthorized ('oauth' is false)",
                f"Check the credentials in 'headers' of {where}, or remove \"oauth\": false "
                "to log in with OAuth.",
            )
        if oauth.browserless:
            return AuthProblem(
                f"{config.url} answered 401 Unauthorized with the {oauth.grant} token",
                f"Check 'oauth.client_id' and the credentials in 'oauth' of {where}.",
            )
        if any(k.lower() == "authorization" for k in config.headers):
            return AuthProblem(
                f"{config.url} answered 401 Unauthorized to the 'Authorization' header",
                f"Check the credentials in 'headers' of {where}.",
            )
        return AuthProblem(
            f"{config.url} needs authorization (HTTP 401)",
            f"Run `codebot mcp login {config.name}` (or pass --login) if it uses OAuth; if it "
            f"takes a static token, put it in 'headers' of {where}.",
            needs_login=True,
        )
    if trace.status == 403:
        scope = "insufficient_scope" in (trace.www_authenticate or "")
        if scope and oauth.enabled and not oauth.browserless:
            return AuthProblem(
                f"{config.url} answered 403: the login lacks a scope it needs",
                login_hint(config),
                needs_login=True,
            )
        return AuthProblem(
            f"{config.url} answered 403 Forbidden",
            f"The credentials are valid but not allowed; check 'headers' and 'oauth.scopes' "
            f"of {where}.",
        )
    return None


def _explain_mcp_error(exc: MCPError, config: ServerConfig) -> tuple[str, str | None]:
    where = f"server '{config.name}' in {config.source}"
    message = exc.message
    if config.type == "http":
        lowered = message.lower()
        # 401 and 403 are decided from the response status (explain_auth), not from text.
        if "404" in message or "not found" in lowered:
            return f"{config.url} answered 404 Not Found", f"Check the 'url' path of {where}."
        if "content type" in lowered:
            return f"{config.url} is not an MCP endpoint ({message})", (
                f"Check the 'url' of {where}: it must be the server's Streamable HTTP endpoint, "
                "often ending in /mcp."
            )
        if exc.code == types.INTERNAL_ERROR:
            return f"{config.url} answered with an HTTP error ({message})", (
                f"The server failed; check its logs, and the 'url' of {where}."
            )
    if exc.code == types.CONNECTION_CLOSED:
        return closed_early(config)
    return rpc_error_text(exc.code, message), None


def describe_invalid_result(exc: ValidationError, server: str) -> str:
    """One line for a result the SDK rejected as not matching the MCP schema."""
    return (
        f"server '{server}' sent a result that does not follow the MCP schema: {first_problem(exc)}"
    )


def first_problem(exc: ValidationError) -> str:
    """The first problem pydantic found, where it is, and how many more there are."""
    errors = exc.errors(include_url=False, include_input=False)
    where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
    first = f"{where}: {errors[0]['msg']}" if errors else str(exc).splitlines()[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{first}{more}"


def explain_call(
    exc: Exception,
    config: ServerConfig,
    tool: str,
    *,
    model_name: str,
    redact: Callable[[str], str],
    restarts: bool,
    oversized: bool,
    trace: AuthTrace,
) -> CallFailure:
    """What the SDK raised for one ``tools/call`` of ``tool`` (its own name; ``model_name``:
    the name the model knows), as the one record of the call's failure."""
    name = config.name
    model = f"calling {model_name} failed: {redact(str(exc))}"
    if isinstance(exc, InputRequiredRoundsExceededError):
        return too_many_rounds_failure(name, tool)
    if isinstance(exc, ValidationError):
        return invalid_result(name, tool, first_problem(exc), model_name=model_name)
    if isinstance(exc, MCPError | anyio.BrokenResourceError | anyio.ClosedResourceError):
        big = isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED and oversized
        auth = None if big else explain_auth(exc, config, trace)
        if isinstance(exc, MCPError):
            failure = call_failure(
                exc.code, redact(exc.message), config, tool, restarts=restarts, oversized=big
            )
            model = failure.for_model()
            if auth is None:
                return failure
    elif isinstance(exc, ConnectionError):
        auth = explain_auth(exc, config, trace)
    else:
        auth = None
    if auth is not None:
        message = f"server '{name}' refused '{tool}': {auth.message}"
        return CallFailure(name, tool, "auth", message, auth.hint, model)
    if isinstance(exc, ConnectionError | anyio.BrokenResourceError | anyio.ClosedResourceError):
        detail = redact(str(exc) or type(exc).__name__)
        message = f"server '{name}' went away during the call: {detail}"
        return CallFailure(name, tool, "gone", message, None, model)
    if isinstance(exc, RuntimeError):  # the SDK's checks of structured content
        return output_schema_failure(name, tool, redact(str(exc)), model)
    detail = redact(str(exc) or type(exc).__name__)
    message = f"'{tool}' on server '{name}' failed: {detail}"
    hint = "Re-run with --debug for the SDK's log."
    return CallFailure(name, tool, "unexpected", message, hint, model)
