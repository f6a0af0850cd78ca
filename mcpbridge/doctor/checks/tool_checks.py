"""Checks over each tool of a connected server: what the model will see, and what APIs accept."""

from __future__ import annotations

from collections.abc import Iterator

from codebot_mcp.core.tools.base import Capability
from codebot_mcp.mcpbridge.doctor.checks.check_base import Finding, ToolContext, check
from codebot_mcp.mcpbridge.doctor.checks.schema_checks import (
    schema_errors,
    strict_mode_breakers,
    validator_class,
)
from codebot_mcp.mcpbridge.tools.naming import MAX_NAME_LENGTH, plain_name

LONG_DESCRIPTION_CHARS = 1024
"""Past this a description is noted (info): OpenAI's Chat Completions rejected longer ones
until mid-2025 ("string_above_max_length"); the API documents no limit now and accepts them,
and chat sends every description whole, so doctor does not warn."""


def _label(ctx: ToolContext) -> str:
    return f"tool '{ctx.tool.original_name}' of server '{ctx.server.name}'"


def _exclude_hint(ctx: ToolContext) -> str:
    return (
        f'or hide the tool with "exclude_tools": ["{ctx.tool.original_name}"] in '
        f"{ctx.server.where}."
    )


@check(
    "tool.name",
    "tool",
    "warning",
    "the model-visible name had to be sanitized, shortened or de-duplicated",
)
def _name(ctx: ToolContext) -> Iterator[Finding]:
    tool, reason = ctx.tool, ctx.tool.name_reason
    if reason is None:
        return
    plain = plain_name(ctx.server.name, tool.original_name)
    if reason == "sanitized":
        why = "only letters, digits, '_' and '-' are allowed"
        fix = "ask the server's author to rename the tool"
    elif reason == "shortened":
        why = f"'{plain}' is {len(plain)} characters, over the limit of {MAX_NAME_LENGTH}"
        fix = f"give server '{ctx.server.name}' a shorter name in {ctx.server.config.source}"
    else:
        why = f"another tool is already named '{plain}'"
        fix = "rename one of the servers"
    yield ctx.finding(
        "tool.name",
        "warning",
        f"{_label(ctx)} is shown to the model as '{tool.name}' ({reason}: {why})",
        f"It works under that name; for a readable one, {fix}, {_exclude_hint(ctx)}",
    )


@check("tool.description", "tool", "warning", "the tool has no description")
def _description(ctx: ToolContext) -> Iterator[Finding]:
    if not ctx.tool.description.strip():
        yield ctx.finding(
            "tool.description",
            "warning",
            f"{_label(ctx)} has no description; the model can only guess from its name",
            f"Ask the server's author to describe it, {_exclude_hint(ctx)}",
        )


@check(
    "tool.description_length",
    "tool",
    "info",
    f"the description is over {LONG_DESCRIPTION_CHARS} characters (sent whole; a note)",
)
def _description_length(ctx: ToolContext) -> Iterator[Finding]:
    length = len(ctx.tool.description)
    if length > LONG_DESCRIPTION_CHARS:
        yield ctx.finding(
            "tool.description_length",
            "info",
            f"{_label(ctx)} has a description of {length} characters; codebot sends it whole "
            f"(OpenAI's API accepts it; some OpenAI-compatible servers, and OpenAI before "
            f"mid-2025, rejected descriptions over {LONG_DESCRIPTION_CHARS})",
            "If your model endpoint rejects it (chat exits 5 with 'string too long'), hide "
            f'the tool with "exclude_tools": ["{ctx.tool.original_name}"] in '
            f"{ctx.server.where}.",
        )


@check("tool.schema", "tool", "error", "the input schema is not a valid JSON Schema for an object")
def _schema(ctx: ToolContext) -> Iterator[Finding]:
    schema = ctx.tool.schema()
    kind = schema.get("type")
    problems: list[str] = []
    if kind != "object":
        problems.append(f"/: the type is {kind!r}, but tool arguments must be an object")
    problems.extend(schema_errors(schema))
    if problems:
        yield ctx.finding(
            "tool.schema",
            "error",
            f"{_label(ctx)} has an invalid input schema: {'; '.join(problems)}",
            f"Model APIs reject the whole request over it. Ask the server's author to fix "
            f"the schema, {_exclude_hint(ctx)}",
        )
        return
    _, unknown = validator_class(schema)
    if unknown is not None:
        yield ctx.finding(
            "tool.schema",
            "info",
            f"{_label(ctx)} declares an unknown $schema {unknown!r}; it was checked as "
            "JSON Schema 2020-12",
        )


@check("tool.schema_strict", "tool", "info", "the schema uses features OpenAI strict mode rejects")
def _schema_strict(ctx: ToolContext) -> Iterator[Finding]:
    found = strict_mode_breakers(ctx.tool.schema())
    if found:
        yield ctx.finding(
            "tool.schema_strict",
            "info",
            f"{_label(ctx)} uses schema features OpenAI strict mode rejects: {', '.join(found)}",
            "Only matters with strict function calling. To be safe there, ask the server's "
            "author for a plain schema (no allOf/not/if, standard formats, objects with "
            "properties).",
        )


@check(
    "tool.capability", "tool", "warning", "the capability is unknown, or the annotations contradict"
)
def _capability(ctx: ToolContext) -> Iterator[Finding]:
    hints = ctx.tool.tool.annotations
    if hints is not None and hints.read_only_hint is True and hints.destructive_hint is True:
        permission = ctx.tool.info.permission
        yield ctx.finding(
            "tool.capability",
            "warning",
            f"{_label(ctx)} is annotated both readOnlyHint and destructiveHint; codebot "
            f"treats it as {permission.capability.value}",
            "Ask the server's author to fix the annotations.",
        )
        return
    permission = ctx.tool.info.permission
    if permission.capability is Capability.UNKNOWN:
        yield ctx.finding(
            "tool.capability",
            "info",
            f"{_label(ctx)} has an unknown capability ({permission.reason}); codebot asks "
            "before every call",
            f'To skip the question, add "{ctx.tool.name}" to "permissions": {{"allow": [...]}} '
            "in your settings.",
        )
