"""``chat --output-schema FILE``: the final answer must be JSON that validates against a schema.

:func:`load` reads and checks the schema (a bad file is a usage error naming it);
:meth:`OutputSchema.response_format` is what the endpoint is asked for (structured output,
where it supports it: :mod:`core.model.client` drops it when the endpoint rejects it);
:meth:`OutputSchema.instruction` goes with the prompt either way, and :meth:`OutputSchema.check`
validates every answer with ``jsonschema``, whatever the endpoint promised.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from codebot_mcp.core.errors import CodebotError, ExitCode, UsageError

MAX_SCHEMA_BYTES = 1_000_000
"""A schema is a few kilobytes; a bigger file is a mistake (or a hostile one), not a schema."""
_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL)
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class OutputSchemaError(CodebotError):
    """The final answer did not validate against ``--output-schema``, twice (exit 1)."""

    exit_code = ExitCode.TOOL_ERROR


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A JSON Schema the final answer must validate against."""

    path: Path
    schema: dict[str, Any]

    def response_format(self) -> dict[str, Any]:
        """Chat Completions' ``response_format`` asking for JSON of this schema."""
        name = _NAME.sub("_", self.path.stem)[:64] or "answer"
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": self.schema, "strict": False},
        }

    def instruction(self) -> str:
        """What the prompt says about the answer's form (also where structured output is
        not supported)."""
        schema = json.dumps(self.schema, ensure_ascii=False)
        return (
            "When you give your final answer, answer with one JSON value only (no prose "
            f"around it, no code fence) that validates against this JSON Schema:\n{schema}"
        )

    def check(self, answer: str) -> tuple[Any, str | None]:
        """The answer parsed, and None; or None and why it does not validate (a JSON value in
        one Markdown code fence is accepted: models add them)."""
        from jsonschema import validators  # type: ignore[import-untyped]

        text = answer.strip()
        fenced = _FENCE.match(text)
        if fenced:
            text = fenced.group("body").strip()
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            return None, f"the answer is not JSON ({why})"
        validator: Any = validators.validator_for(self.schema)(self.schema)
        error: Any = next(iter(validator.iter_errors(value)), None)
        if error is None:
            return value, None
        where = "/".join(str(p) for p in error.absolute_path) or "(the top level)"
        return None, f"at {where}: {error.message}"

    def retry_prompt(self, problem: str) -> str:
        """The follow-up message when an answer did not validate."""
        return (
            f"Your answer does not validate against the required JSON Schema: {problem}. "
            "Answer again with only the corrected JSON value."
        )


def load(path: Path) -> OutputSchema:
    """Read and check ``--output-schema FILE``.

    Raises:
        UsageError: the file cannot be read, is not JSON, is not a JSON Schema object, or is
            not a valid schema (the message names the file).
    """
    from jsonschema import exceptions, validators  # type: ignore[import-untyped]

    flag = f"--output-schema {path}"
    hint = 'Pass a file holding a JSON Schema object, e.g. {"type": "object", ...}.'
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_SCHEMA_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{flag}: cannot read it: {exc.strerror or exc}", hint=hint) from None
    if len(raw) > MAX_SCHEMA_BYTES:
        raise UsageError(f"{flag}: over {MAX_SCHEMA_BYTES:,} bytes; not a schema", hint=hint)
    try:
        schema = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{flag}: not UTF-8 text", hint=hint) from None
    except (json.JSONDecodeError, RecursionError) as exc:
        why = (
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            if isinstance(exc, json.JSONDecodeError)
            else "nested too deeply"
        )
        raise UsageError(f"{flag}: {why}", hint=hint) from None
    if not isinstance(schema, dict):
        raise UsageError(f"{flag}: a schema must be a JSON object", hint=hint)
    checker: Any = validators.validator_for(schema)
    try:
        checker.check_schema(schema)
    except exceptions.SchemaError as exc:
        problem: Any = exc
        where = "/".join(str(p) for p in problem.absolute_path) or "the top level"
        raise UsageError(
            f"{flag}: not a valid JSON Schema (at {where}: {problem.message})", hint=hint
        ) from None
    return OutputSchema(path, cast(dict[str, Any], schema))
