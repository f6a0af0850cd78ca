"""What the conformance client does per scenario: a handler by scenario name, and the helpers.

Each handler gets the :class:`~tests.conformance.codebot_cli.Codebot` of the run and the
harness's ``MCP_CONFORMANCE_CONTEXT``; it does what the Python SDK's own conformance client
does for that scenario, through codebot's commands. ``auth/*`` scenarios without a handler of
their own run :func:`run_auth`, with the ``oauth`` entry :func:`oauth_settings` builds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.conformance.codebot_cli import SERVER, Codebot, log

# The SDK's conformance client uses this Client ID Metadata Document URL; the harness accepts it.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
# Arguments that satisfy a required property of each JSON type (as the SDK's client does).
STUB_BY_TYPE: dict[str, Any] = {
    "string": "x",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "object": {},
    "array": [],
    "null": None,
}


def json_values(text: str, key: str) -> list[str]:
    """Every string value under ``key``, anywhere in the JSON document ``text``."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k == key and isinstance(v, str):
                    found.append(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    try:
        walk(json.loads(text))
    except ValueError:
        pass
    return found


def stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """The least arguments that satisfy ``schema``'s required list."""
    props = schema.get("properties") or {}
    return {
        name: STUB_BY_TYPE.get((props.get(name) or {}).get("type"), "x")
        for name in schema.get("required") or []
    }


Scenario = Callable[[Codebot, dict[str, Any]], None]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


@scenario("initialize", "json-schema-ref-no-deref")
def run_list(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Connect, initialize, list the tools."""
    cb.run("mcp", "list")


@scenario("tools_call")
def run_add_numbers(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Call add_numbers(a=5, b=3) (codebot lists the tools first to find it)."""
    cb.call("add_numbers", {"a": 5, "b": 3})


@scenario("request-metadata")
def run_request_metadata(cb: Codebot, ctx: dict[str, Any]) -> None:
    """List with every client capability codebot can declare, then add_numbers if offered.

    The scenario checks the ``_meta`` envelope and headers of every request; its mock may list
    no tools, so the call (as in the SDK's client) is best effort.
    """
    tools = cb.list_tools(*cb.elicit_flags("list"))
    if any(t.get("original_name") == "add_numbers" for t in tools):
        cb.call("add_numbers", {"a": 5, "b": 3}, *cb.elicit_flags("call"), must_succeed=False)


@scenario("sse-retry")
def run_sse_retry(cb: Codebot, ctx: dict[str, Any]) -> None:
    """A call whose SSE stream the server closes early with ``retry:``; codebot must resume."""
    cb.call("test_reconnection", {})


@scenario("json-schema-2020-12-preservation")
def run_schema_echo(cb: Codebot, ctx: dict[str, Any]) -> None:
    """List the tools, then echo the focal tool's input schema back as codebot shows it."""
    tools = cb.list_tools()
    focal = next((t for t in tools if t.get("original_name") == "json_schema_2020_12_tool"), None)
    if focal is None:
        log("json_schema_2020_12_tool not listed")
        cb.first_failure = cb.first_failure or 1
        return
    cb.call("json_schema_echo", {"schema": focal.get("input_schema")})


@scenario("http-standard-headers")
def run_every_method(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Exercise every request kind codebot sends (Mcp-Method / Mcp-Name headers are checked).

    Every listed tool is called in one batch; resources and prompts are listed and read once
    codebot has the commands for them (issue 12).
    """
    tools = cb.list_tools()
    calls = [(t["original_name"], stub_arguments(t.get("input_schema") or {})) for t in tools]
    if calls:
        cb.batch(calls)
    if cb.has_command("resources"):
        uris = json_values(cb.run("mcp", "resources", SERVER, "--json"), "uri")
        if uris and cb.has_command("read"):
            cb.run("mcp", "read", SERVER, uris[0], must_succeed=False)
    if cb.has_command("prompts"):
        names = json_values(cb.run("mcp", "prompts", SERVER, "--json"), "name")
        names = [n for n in names if n != SERVER]
        if names and cb.has_command("prompt"):
            cb.run("mcp", "prompt", SERVER, names[-1], must_succeed=False)


@scenario("http-invalid-tool-headers")
def run_every_tool(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Call every tool codebot surfaces, with stub arguments (malformed ones must be dropped)."""
    tools = cb.list_tools()
    calls = [(t["original_name"], stub_arguments(t.get("input_schema") or {})) for t in tools]
    if calls:
        cb.batch(calls, must_succeed=False)


@scenario("http-custom-headers")
def run_tool_calls(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Replay the harness's ``toolCalls`` verbatim (null and edge values included), one batch."""
    calls = [(c["name"], c.get("arguments") or {}) for c in ctx.get("toolCalls") or []]
    cb.batch(calls, must_succeed=False)


@scenario("elicitation-sep1034-client-defaults")
def run_elicitation_defaults(cb: Codebot, ctx: dict[str, Any]) -> None:
    """A tool that elicits a form; ``--elicit defaults`` answers with the schema's defaults."""
    cb.call("test_client_elicitation_defaults", {}, *cb.elicit_flags())


@scenario("sep-2322-client-request-state")
def run_request_state(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Multi-round tool calls (SEP-2322), retried with ``requestState``, in one batch."""
    names = ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state"]
    names.append("test_mrtr_no_result_type")
    answers = cb.batch([(n, {}) for n in names], *cb.elicit_flags())
    for answer in answers:
        if "error" in answer:
            log(f"line {answer.get('line')} failed: {answer['error'].get('message')}")


def listed_skills(cb: Codebot) -> list[str]:
    """``codebot skills list --json``: the names of the server's skills (as codebot shows them)."""
    out = cb.run("skills", "list", "--json")
    try:
        skills = json.loads(out)["skills"]
    except (ValueError, KeyError, TypeError):
        log("skills list --json printed no skills document")
        cb.first_failure = cb.first_failure or 1
        return []
    names = [s["name"] for s in skills if s.get("server") == SERVER]
    if not names:
        log("skills list showed none of the server's skills")
        cb.first_failure = cb.first_failure or 1
    return names


@scenario("sep-2640-client-no-prefetch")
def run_skills_list(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Skills extension (SEP-2640): list the server's skills; no file may be read for that."""
    listed_skills(cb)


# What each tampering scenario must make `skills show` say about the SKILL.md it rejects.
SKILL_MISMATCH = {
    "sep-2640-client-verify-digest": "digest",
    "sep-2640-client-verify-size": "size",
    "sep-2640-client-verify-frontmatter": "front matter field 'description'",
}


@scenario(*SKILL_MISMATCH)
def run_skills_verify(cb: Codebot, ctx: dict[str, Any]) -> None:
    """List the skills, then load the listed one with every file, as the model would.

    The server serves a SKILL.md that disagrees with its entry: the harness checks that
    codebot read it and then fetched nothing more; this client checks that codebot exited 1
    naming the file and what did not match (the harness allows a failing client here).
    """
    names = listed_skills(cb)
    if not names:
        return
    cb.run("skills", "show", names[0], "--files", must_succeed=False)
    expected = SKILL_MISMATCH[cb.scenario]
    said = cb.last_stderr
    if cb.last_code != 1 or "SKILL.md" not in said or expected not in said:
        log(f"expected exit 1 naming SKILL.md and its {expected!r}; got exit {cb.last_code}")
        cb.first_failure = cb.first_failure or 1


# Browserless grants: the credential reaches codebot as a ${VAR}, as in CI (never in the file).
ASSERTION_VAR = "CONFORMANCE_WIF_ASSERTION"
ID_TOKEN_VAR = "CONFORMANCE_ID_TOKEN"


def oauth_settings(name: str, ctx: dict[str, Any]) -> dict[str, Any]:
    """The ``oauth`` object of the server entry for an ``auth/*`` scenario and its context."""
    if name == "auth/wif-jwt-bearer":  # workload identity (SEP-1933): the valid workload JWT
        return {
            "grant": "jwt_bearer",
            "client_id": ctx.get("client_id"),
            "assertion": "${" + ASSERTION_VAR + "}",
        }
    if name == "auth/enterprise-managed-authorization":  # SEP-990: ID token -> ID-JAG -> token
        return {
            "grant": "identity_assertion",
            "client_id": ctx.get("client_id"),
            "client_secret": ctx.get("client_secret"),
            "idp_token_endpoint": ctx.get("idp_token_endpoint"),
            "idp_client_id": ctx.get("idp_client_id"),
            "id_token": "${" + ID_TOKEN_VAR + "}",
        }
    if name in ("auth/client-credentials-jwt", "auth/client-credentials-basic"):
        oauth: dict[str, Any] = {"grant": "client_credentials", "client_id": ctx.get("client_id")}
        if ctx.get("private_key_pem"):
            oauth["private_key"] = ctx["private_key_pem"]
            oauth["signing_algorithm"] = ctx.get("signing_algorithm", "ES256")
        if ctx.get("client_secret"):
            oauth["client_secret"] = ctx["client_secret"]
        return oauth
    if ctx.get("client_id"):  # a pre-registered client
        oauth = {"client_id": ctx["client_id"]}
        if ctx.get("client_secret"):
            oauth["client_secret"] = ctx["client_secret"]
    else:  # a Client ID Metadata Document, or dynamic registration where the server has none
        oauth = {"client_metadata_url": CLIENT_METADATA_URL}
    if ctx.get("scopes"):
        oauth["scopes"] = ctx["scopes"]
    return oauth


@scenario("auth/wif-jwt-bearer", "auth/enterprise-managed-authorization")
def run_browserless(cb: Codebot, ctx: dict[str, Any]) -> None:
    """The grants that need no browser: the credential in the environment, no ``--login``."""
    if ctx.get("valid_jwt"):
        cb.env[ASSERTION_VAR] = ctx["valid_jwt"]
    if ctx.get("idp_id_token"):
        cb.env[ID_TOKEN_VAR] = ctx["idp_id_token"]
    tools = cb.list_tools()
    if tools:
        cb.call(tools[0]["original_name"], {}, *cb.elicit_flags(), must_succeed=False)


def run_auth(cb: Codebot, ctx: dict[str, Any]) -> None:
    """Log in inline while listing, then call the first tool (best effort, as the SDK does)."""
    tools = cb.list_tools(*cb.login_flags("list"))
    if tools:
        first = tools[0]
        cb.call(
            first["original_name"],
            {},
            *cb.login_flags("call"),
            *cb.elicit_flags(),
            must_succeed=False,
        )
