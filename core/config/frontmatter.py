"""YAML front matter: the ``---``-fenced block at the head of a Markdown definition file.

Skills (``SKILL.md``), agents, and slash commands share this format. The block is parsed as
YAML 1.2 core scalars rather than PyYAML's 1.1 defaults: ``yes``/``no``/``on``/``off`` stay
strings, ``2024-01-01`` stays a string (not a date), ``1:30`` stays a string (not 90). A skill
served over MCP carries its front matter as JSON, and the host compares it with the file
field by field, so the file must parse to the same values a JSON-minded author wrote.
A key written twice is an error (the later value would silently win otherwise).

:func:`parse` splits and parses a whole text; :func:`read_head` reads only the block from a
file (listing skills reads no body).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FENCE = "---"
MAX_HEAD_BYTES = 64 * 1024
"""Front matter longer than this is refused: a name and a description need a few lines."""
_OPEN = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


class FrontMatterError(ValueError):
    """The front matter is not valid: the message says where and why."""


@dataclass(frozen=True, slots=True)
class Document:
    """A definition file split into its front matter fields and its body."""

    fields: dict[str, Any] = field(default_factory=dict[str, Any])
    """The parsed front matter (empty when the file has none)."""
    body: str = ""
    """Everything after the closing fence (the whole text when there is no front matter)."""
    has_front_matter: bool = False


def split(text: str) -> tuple[str | None, str]:
    """The YAML between the fences (None when the text has no front matter) and the body.

    Raises:
        FrontMatterError: an opening fence with no closing one.
    """
    opened = _OPEN.match(text)
    if opened is None:
        return None, text.removeprefix("\ufeff")
    closed = _CLOSE.search(text, opened.end())
    if closed is None:
        raise FrontMatterError("the front matter opened with '---' is never closed")
    return text[opened.end() : closed.start()], text[closed.end() :]


def parse(text: str) -> Document:
    """Split ``text`` and parse its front matter.

    Raises:
        FrontMatterError: the fences or the YAML are malformed, or the block is not a mapping.
    """
    yaml_text, body = split(text)
    if yaml_text is None:
        return Document(body=body)
    return Document(load_yaml(yaml_text), body, True)


def read_head(path: Path, limit: int = MAX_HEAD_BYTES) -> Document:
    """The front matter of the file at ``path``, reading no more of it than the block.

    The returned document's ``body`` is empty: the body was not read.

    Raises:
        OSError: the file cannot be read.
        FrontMatterError: no closing fence within ``limit`` bytes, or invalid YAML.
    """
    with path.open("rb") as stream:
        head = stream.read(limit + 1)
    text = head.decode("utf-8", errors="replace")
    if _OPEN.match(text) is None:
        return Document()
    try:
        yaml_text, _ = split(text)
    except FrontMatterError:
        if len(head) > limit:
            raise FrontMatterError(
                f"the front matter is not closed within its first {limit} bytes"
            ) from None
        raise
    assert yaml_text is not None
    return Document(load_yaml(yaml_text), "", True)


def load_yaml(text: str) -> dict[str, Any]:
    """A front matter block as a mapping of JSON-compatible values.

    Raises:
        FrontMatterError: invalid YAML, a duplicate key, or not a mapping.
    """
    import yaml  # deferred: only commands that read definition files pay for it

    try:
        value = yaml.load(text, Loader=_loader())  # a SafeLoader subclass: no object tags
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 2}, column {mark.column + 1}" if mark else ""
        raise FrontMatterError(f"invalid YAML in the front matter{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"invalid YAML in the front matter: {exc}") from None
    except RecursionError:
        raise FrontMatterError("the front matter is nested too deeply") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontMatterError(
            f"the front matter must be a mapping of fields, found {type(value).__name__}"
        )
    return value  # pyright: ignore[reportUnknownVariableType]


_LOADER: Any = None


def _loader() -> Any:
    """PyYAML's SafeLoader with YAML 1.2 core scalars and duplicate keys refused (built once)."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml

    dropped = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
    dropped.add("tag:yaml.org,2002:timestamp")

    class Loader(yaml.SafeLoader):
        """SafeLoader: 1.2 core booleans and numbers, no timestamps, unique keys."""

    Loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in dropped]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:int",
        re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
        list("-+0123456789"),
    )
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+.0123456789"),
    )

    def construct_int(loader: Any, node: Any) -> int:
        value = str(loader.construct_scalar(node))
        sign = -1 if value.startswith("-") else 1
        digits = value.lstrip("+-")
        if digits.startswith("0x"):
            return sign * int(digits[2:], 16)
        if digits.startswith("0o"):
            return sign * int(digits[2:], 8)
        return sign * int(digits, 10)

    def construct_mapping(loader: Any, node: Any) -> dict[str, Any]:
        loader.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be a plain value", key_node.start_mark
                )
            # JSON object keys are strings: `1: x` is the field "1", as a JSON author wrote it.
            name = key if isinstance(key, str) else _json_scalar(key)
            if name in out:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the field '{name}' is written twice", key_node.start_mark
                )
            out[name] = loader.construct_object(value_node, deep=True)
        return out

    Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    Loader.add_constructor("tag:yaml.org,2002:map", construct_mapping)
    _LOADER = Loader
    return Loader


def _json_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
