"""The values an install needs: questions from ``server.json`` inputs, and their answers.

Each input that is not fixed becomes a :class:`Question`; a fixed ``value`` is used as given
but its ``{variables}`` are questions too. Answers come from ``--set LABEL=VALUE`` (by the
variable's, argument's or environment variable's name), else from the :class:`Asker` (the
terminal, or lines on stdin), else from the input's default; a required input nothing gives
is a usage error naming it.

A secret is never asked and never written: its answer is a ``${VAR}`` reference, and the
user exports ``VAR``. Text the registry supplies (fixed values, defaults) is written
literally (``${`` escaped as ``$${``): a publisher's ``${OPENAI_API_KEY}`` must not expand
into your key. What you type is taken as you typed it, references included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Protocol

from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.registry.serverjson import Input
from codebot_mcp.core.secrets.redact import printable

MAX_ATTEMPTS = 5
"""Answers one question may be given before the install stops (a script piping bad input)."""
_TRUE = ("true", "yes", "y", "1", "on")
_FALSE = ("false", "no", "n", "0", "off")
_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$")


def escape(text: str) -> str:
    """Registry text as a literal settings value: ``${`` → ``$${`` (never expanded)."""
    return text.replace("${", "$${")


def variable_name(text: str) -> str:
    """An environment variable name for ``text`` (``X-API-Key`` → ``X_API_KEY``)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        return text
    name = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper() or "SECRET"
    return "_" + name if name[0].isdigit() else name


@dataclass(frozen=True, slots=True)
class Question:
    """One value the install needs."""

    key: str
    """Where the input sits in the chosen package or remote (``env[1]``, ``url.tenant``)."""
    input: Input
    where: str
    """What it is, for the user: ``environment variable``, ``argument --port``..."""

    @property
    def label(self) -> str:
        """The name ``--set`` takes."""
        return self.input.label

    @property
    def secret(self) -> bool:
        """Never asked, never written: the entry gets ``${variable}``."""
        return self.input.is_secret

    @property
    def variable(self) -> str:
        """The variable a secret is read from: an environment variable's own name, else the
        label in capitals (``X-API-Key`` → ``X_API_KEY``, ``{token}`` → ``TOKEN``)."""
        name = variable_name(self.label)
        return name if self.input.kind == "env" else name.upper()


class Asker(Protocol):
    """Asks the user one question (the CLI's terminal, or lines on stdin)."""

    def ask(self, question: Question, problem: str | None, again: bool) -> str | None:
        """The text given ("" for none), or None when the input ended.

        ``problem`` says what was wrong with the last answer; ``again`` asks for one more
        value of a repeated input.
        """
        ...


def coerce(item: Input, text: str, cwd: Path) -> str:
    """``text`` as the input's ``format`` says (``boolean`` → ``true``/``false``, ``number``
    → decimal, ``filepath`` → absolute), checked against its ``choices``.

    Raises:
        ValueError: with what is wrong, for the user.
    """
    if any(c in text for c in "\0\r\n"):
        raise ValueError("it contains a control character (NUL or a line break)")
    value = text.strip() if item.format != "string" else text
    if item.format == "boolean":
        if value.lower() in _TRUE:
            value = "true"
        elif value.lower() in _FALSE:
            value = "false"
        else:
            raise ValueError("expected true or false")
    elif item.format == "number":
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise ValueError("expected a number") from None
        if not number.is_finite():
            raise ValueError("expected a finite number")
        value = str(int(number)) if number == number.to_integral_value() else format(number, "f")
    elif item.format == "filepath" and value and not _REFERENCE.match(value):
        path = Path(value).expanduser()
        value = str(path if path.is_absolute() else (cwd / path))
    if item.choices and value not in item.choices:
        folded = [c for c in item.choices if c.lower() == value.lower()]
        if len(folded) != 1:
            raise ValueError(f"expected one of {', '.join(item.choices)}")
        value = folded[0]
    return value


def _default(item: Input, cwd: Path) -> str | None:
    """The input's default, checked like an answer (a bad default is no default)."""
    if item.default is None:
        return None
    try:
        return escape(coerce(item, item.default, cwd))
    except ValueError:
        return None


def resolve(
    questions: Sequence[Question],
    given: Mapping[str, list[str]],
    *,
    asker: Asker | None,
    ask_optional: bool,
    cwd: Path,
) -> dict[str, list[str]]:
    """The answer to every question (``Question.key`` → values; empty: left out).

    Args:
        given: ``--set`` values by label (see :func:`parse_sets`).
        asker: Asks what is missing; None: nothing is asked (``--yes`` without a terminal).
        ask_optional: Ask optional inputs too (not only required ones nothing gives).

    Raises:
        UsageError: a ``--set`` value is invalid or names a secret, or a required input gets
            no value (naming it).
    """
    answers: dict[str, list[str]] = {}
    asked: dict[str, list[str]] = {}
    """Answers typed, by label: an input named twice (a header and the URL) is asked once."""
    for question in questions:
        item = question.input
        values = given.get(question.label)
        if values is None and question.label in asked and not question.secret:
            answers[question.key] = asked[question.label]
            continue
        if question.secret:
            if values and not all(_REFERENCE.match(v) for v in values):
                raise UsageError(
                    f"'{question.label}' ({question.where}) is a secret: codebot never writes "
                    "a secret to a settings file",
                    hint=f"Drop --set {question.label}; export {question.variable} instead (or "
                    f"--set {question.label}='${{OTHER_VARIABLE}}' to read another variable).",
                )
            answers[question.key] = values or [f"${{{question.variable}}}"]
            continue
        if values is not None:
            answers[question.key] = [_given(question, v, cwd) for v in values]
            if len(values) > 1 and not item.is_repeated:
                raise UsageError(
                    f"--set {question.label} is given {len(values)} times, but it takes one value"
                )
            continue
        if asker is not None and (ask_optional or (item.is_required and item.default is None)):
            answers[question.key] = asked[question.label] = _ask(asker, question, cwd)
        else:
            default = _default(item, cwd)
            answers[question.key] = [default] if default is not None else []
        if item.is_required and not answers[question.key]:
            raise UsageError(
                f"'{question.label}' ({question.where}) is required and has no value"
                + (": nothing was asked (no terminal)" if asker is None else ""),
                hint=f"Pass --set {question.label}=VALUE"
                + (f" ({printable(item.description, one_line=True)})" if item.description else "")
                + ".",
            )
    return answers


def _given(question: Question, text: str, cwd: Path) -> str:
    try:
        return coerce(question.input, text, cwd)
    except ValueError as exc:
        raise UsageError(
            f"--set {question.label}={printable(text, one_line=True)}: {exc}",
            hint=f"'{question.label}' is the {question.where}.",
        ) from None


def _ask(asker: Asker, question: Question, cwd: Path) -> list[str]:
    """Ask until a valid answer (or none, for an optional input); more for a repeated one."""
    item = question.input
    values: list[str] = []
    problem: str | None = None
    for _ in range(MAX_ATTEMPTS * (8 if item.is_repeated else 1)):
        text = asker.ask(question, problem, bool(values))
        if text is None or text == "":
            if values:
                return values
            default = _default(item, cwd)
            if default is not None:
                return [default]
            if text is None or not item.is_required:
                return []
            problem = "a value is required"
            continue
        try:
            values.append(coerce(item, text, cwd))
        except ValueError as exc:
            problem = str(exc)
            continue
        problem = None
        if not item.is_repeated:
            return values
    if values:
        return values
    raise UsageError(
        f"no valid value for '{question.label}' ({question.where}) after {MAX_ATTEMPTS} tries",
        hint=f"Pass --set {question.label}=VALUE.",
    )


def parse_sets(pairs: Sequence[str], questions: Sequence[Question]) -> dict[str, list[str]]:
    """``--set LABEL=VALUE`` options by label (a named argument's dashes are optional).

    Raises:
        UsageError: a pair has no ``=``, or names no input of the chosen package or remote.
    """
    labels = {q.label for q in questions}
    out: dict[str, list[str]] = {}
    for pair in pairs:
        label, sep, value = pair.partition("=")
        label = label.strip()
        if label.lstrip("-") in labels:
            label = label.lstrip("-")
        if not sep or not label:
            raise UsageError(
                f"--set {printable(pair, one_line=True)}: expected NAME=VALUE",
                hint="Write --set WEATHER_UNITS=celsius (an input's name, as install lists it).",
            )
        if label not in labels:
            known = ", ".join(sorted(labels)) or "none"
            raise UsageError(
                f"--set {printable(label, one_line=True)}: no input of that name (inputs: {known})",
                hint="Name a variable, an argument (--port or port) or an environment variable.",
            )
        out.setdefault(label, []).append(value)
    return out
