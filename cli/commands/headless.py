"""``codebot chat`` without a REPL: ``-p PROMPT`` (or the prompt on stdin, or user messages as
stream-json lines) answered with text, JSON or stream-json output.

Every exit prints in the chosen format, a failure at start included (bad settings, no API
key, a bad ``--output-schema``): :func:`run` wraps everything from the option checks to the
end in one place, so a JSON document or a final ``result`` event is written whatever ended
the run. Each prompt's end is an :class:`~cli.commands.headless_render.Answer`; the formats
are rendered by :mod:`cli.commands.headless_render`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, BinaryIO

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.commands.headless_render import (
    Answer,
    Output,
    StreamJsonOutput,
    output_for,
    result_fields,
)
from codebot_mcp.cli.runtime import Globals, load_effective
from codebot_mcp.core.agent.outputschema import OutputSchemaError
from codebot_mcp.core.errors import CodebotError, ExitCode, InterruptionError, UsageError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatOptions, ChatRuntime
    from codebot_mcp.cli.repl.chatview import Status
    from codebot_mcp.core.agent.loop import RunResult
    from codebot_mcp.core.media.images import Image
    from codebot_mcp.core.slashcommands.templates import CustomCommand

OUTPUT_FORMATS = ("text", "json", "stream-json")
INPUT_FORMATS = ("text", "stream-json")


def check_formats(options: ChatOptions, *, as_json: bool) -> None:
    """``--output-format``, ``--input-format``, ``--include-partial`` and ``--json`` together.

    Raises:
        UsageError: an unknown format, or options that need another.
    """
    if options.output_format not in OUTPUT_FORMATS:
        raise UsageError(
            f"--output-format {options.output_format}: unknown format",
            hint="Use text, json or stream-json.",
        )
    if options.input_format not in INPUT_FORMATS:
        raise UsageError(
            f"--input-format {options.input_format}: unknown format",
            hint="Use text (the prompt from -p or stdin) or stream-json (JSON lines on stdin).",
        )
    if as_json and options.output_format != "json":
        raise UsageError(
            f"--json and --output-format {options.output_format} disagree",
            hint="--json is --output-format json; pass one of them.",
        )
    stream = options.output_format == "stream-json"
    if options.input_format == "stream-json" and not stream:
        raise UsageError(
            "--input-format stream-json needs --output-format stream-json",
            hint="A program that sends messages reads the events: add --output-format stream-json.",
        )
    if options.include_partial and not stream:
        raise UsageError(
            "--include-partial needs --output-format stream-json",
            hint="Partial text is a stream-json event; add --output-format stream-json.",
        )


# -- the run ----------------------------------------------------------------------------------


def run(globals_: Globals, options: ChatOptions, prepare: Callable[[], None]) -> int:
    """Answer headlessly; ``prepare`` finishes the options (it may raise a usage error).

    Every exit is rendered in the output format; the error itself is then raised for the
    command line to print and map to its exit code.
    """
    out = output_for(options)
    try:
        prepare()
        if options.resume == "":
            _list_for_resume(globals_)
        if options.base_url is None:
            from codebot_mcp.cli.commands.models import offer_local

            offer_local(globals_, options, interactive=False)
        return signals.run(_headless, globals_, options, out)
    except CodebotError as exc:
        out.fail(exc)
        raise
    except KeyboardInterrupt:
        out.fail(InterruptionError())
        render.error_line("interrupted")
        return ExitCode.INTERRUPTED
    except Exception as exc:  # boundary: a bug still ends with the promised document
        out.fail(
            CodebotError(
                f"unexpected error: {type(exc).__name__}: {exc}",
                hint="This is a bug in codebot; re-run with --debug for the traceback.",
            )
        )
        raise


async def _headless(globals_: Globals, options: ChatOptions, out: Output) -> int:
    import anyio

    from codebot_mcp.cli.chat_runtime import open_runtime
    from codebot_mcp.cli.repl.chatview import empty_answer_message, report_mcp
    from codebot_mcp.cli.runtime import sigint_cancels

    stream_input = options.input_format == "stream-json"
    builtin = _builtin_name(options.prompt) if options.prompt and not stream_input else None
    async with open_runtime(globals_, options, None, need_model=builtin is None) as runtime:
        out.runtime = runtime
        if builtin is not None:
            return await _run_builtin(runtime, options, builtin, out)
        agent = runtime.agent
        assert agent is not None
        answers: list[Answer] = []
        view = out.view(runtime)
        pictures = _images(runtime, options)  # --image: a bad file exits 2 before any server
        # Ctrl-C anywhere from the handshakes to the answer cancels this scope: the servers
        # are then stopped by open_runtime's exit, and the run ends with 130.
        with anyio.CancelScope() as scope, sigint_cancels(scope):
            await runtime.manager.start_all()
            report_mcp(runtime.manager)
            for line in await runtime.resume_tasks():  # --continue: tasks left running
                print(render.safe(line), file=sys.stderr)
            await runtime.session.before_prompt()  # the servers' tools, for init
            out.started(runtime)
            async with _status(out.status):
                async for prompt in _prompts(options, out):
                    answer = Answer(prompt)
                    answers.append(answer)
                    out.prompted(answer)
                    await _answer(runtime, options, answer, view, pictures)
                    pictures = ()  # they go with the first prompt
                    if stream_input:
                        out.answered(answer)
                        if answer.failure is not None:
                            render.error(answer.failure)
        if (jobs := runtime.jobs) is not None:
            # -p ends with its answer (or Ctrl-C): jobs still running are killed, and said
            out.jobs_killed(await jobs.kill_all())
        if not answers:
            if not scope.cancelled_caught:
                raise UsageError(
                    "no user message on stdin",
                    hint='Send lines like {"type": "user", "message": {"content": "..."}}.',
                )
            answers.append(Answer(""))
        last = answers[-1]
        code = last.code
        out.ended(last, code, len(answers))
        if last.failure is not None and not stream_input:
            raise last.failure
        if code is ExitCode.INTERRUPTED:
            render.error_line("interrupted")
        elif code is ExitCode.EMPTY_ANSWER and last.result is not None:
            render.warn(empty_answer_message(last.result))
        return code


@asynccontextmanager
async def _status(status: Status | None) -> AsyncIterator[None]:
    """The status line (text and JSON output) runs while the prompts are answered."""
    if status is None:
        yield
        return
    import anyio

    async with anyio.create_task_group() as tg:
        tg.start_soon(status.run)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()


async def _prompts(options: ChatOptions, out: Output) -> AsyncIterator[str]:
    """``-p`` (or stdin's text), then with ``--input-format stream-json`` every user message
    on stdin until it closes; a line that is not one is reported and skipped."""
    from codebot_mcp.cli.streamjson import InputLineError, user_message

    if options.prompt is not None:
        yield options.prompt
    if options.input_format != "stream-json":
        return
    async for number, line in _lines(sys.stdin.buffer):
        if line is None:
            from codebot_mcp.cli.streamjson import INPUT_LINE_CAP_BYTES

            out.input_error(number, f"longer than {INPUT_LINE_CAP_BYTES:,} bytes; skipped")
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            out.input_error(number, "not UTF-8 text")
            continue
        if not text.strip():
            continue
        try:
            message = user_message(text)
        except InputLineError as exc:
            out.input_error(number, str(exc))
            continue
        yield message


async def _lines(stream: BinaryIO) -> AsyncIterator[tuple[int, bytes | None]]:
    """Lines of ``stream`` read in a worker thread (numbered from 1; None: too long)."""
    import anyio.to_thread

    from codebot_mcp.cli.streamjson import INPUT_LINE_CAP_BYTES

    number = 0
    while True:
        line = await anyio.to_thread.run_sync(
            stream.readline, INPUT_LINE_CAP_BYTES + 1, abandon_on_cancel=True
        )
        if not line:
            return
        number += 1
        if len(line) > INPUT_LINE_CAP_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # the rest of the long line, dropped
                line = await anyio.to_thread.run_sync(
                    stream.readline, INPUT_LINE_CAP_BYTES, abandon_on_cancel=True
                )
            yield number, None
            continue
        yield number, line


def _images(runtime: ChatRuntime, options: ChatOptions) -> tuple[Image, ...]:
    """``--image`` files, loaded and fitted to ``images.max_bytes`` (exit 2 when one cannot)."""
    if not options.images:
        return ()
    from codebot_mcp.cli.repl.attach import load_images
    from codebot_mcp.core.media import imagelimits

    return load_images(options.images, runtime.globals.cwd, imagelimits.of(runtime.settings))


async def _answer(
    runtime: ChatRuntime,
    options: ChatOptions,
    answer: Answer,
    view: Any,
    images: tuple[Image, ...] = (),
) -> None:
    """Run one prompt (with its ``--image`` files) into ``answer`` (``--output-schema``:
    validated, asked once more)."""
    from codebot_mcp.cli import extensions
    from codebot_mcp.cli.repl.mcp import expand_mentions
    from codebot_mcp.core.agent.loop import Outcome

    agent = runtime.agent
    assert agent is not None
    before = agent.last
    schema = options.output_schema
    prompt, command = _custom_command(runtime, answer.prompt)
    try:
        # @server:uri as in the REPL: inserted, or the prompt stops (exit 2 for a server
        # that is unknown, disabled or did not start) before the model is asked
        # a command's !`cmd` lines and @path files first: what mentions bring is not scanned
        async with extensions.running(runtime.ext, agent, command, prompt) as prompt:
            prompt = await expand_mentions(prompt, runtime.manager, runtime.untrusted)
            if schema is not None:
                prompt = f"{prompt}\n\n{schema.instruction()}"
            result = await agent.run(prompt, view, images)
        if schema is not None and result.outcome is Outcome.ANSWER:
            value, problem = schema.check(result.text)
            if problem is not None:
                view.warning(
                    f"the answer does not validate against {schema.path}: {problem}; "
                    "asking the model once more"
                )
                first = result
                result = _joined(first, await agent.run(schema.retry_prompt(problem), view))
                answer.result = result
                if result.outcome is Outcome.ANSWER:
                    value, problem = schema.check(result.text)
                if problem is not None and result.outcome is Outcome.ANSWER:
                    raise OutputSchemaError(
                        f"the answer does not validate against {schema.path}, "
                        f"also when asked again: {problem}",
                        hint="Simplify the schema, or use a model that follows instructions "
                        "better; the answer is in the output as it came.",
                    )
            answer.value = value
        answer.result = result
    except CodebotError as exc:
        answer.failure = exc
    finally:
        answer.done = answer.failure is not None or answer.result is not None
        if answer.result is None and agent.last is not before:
            answer.result = agent.last  # what ran before the error or the interrupt


def _joined(first: RunResult, second: RunResult) -> RunResult:
    """The schema retry's result, with the first run's calls, turns and usage before it."""
    second.tool_calls[:0] = first.tool_calls
    second.compactions[:0] = first.compactions
    second.turns += first.turns
    first.usage.add(second.usage)
    second.usage = first.usage
    return second


# -- built-in commands and custom ones --------------------------------------------------------

ONE_SHOT_COMMANDS = (
    *("/help", "/tools", "/context", "/usage", "/sandbox", "/hooks", "/agents"),
    *("/memory", "/init", "/skills"),
    *("/todos",),
)
"""The REPL's report commands that ``-p`` runs too (``codebot chat -p /memory``)."""


def _builtin_name(prompt: str) -> str | None:
    """The built-in command ``prompt`` names, if it is one (a custom command never is)."""
    name = prompt.strip().split(" ", 1)[0]
    return name if name in ONE_SHOT_COMMANDS else None


class _OneShotHost:
    """What the REPL's notes and skills commands need of the REPL, without a terminal: a
    question is answered yes only with ``--yes`` (``/init`` over an existing AGENTS.md)."""

    def __init__(self, runtime: ChatRuntime, yes: bool) -> None:
        from codebot_mcp.cli.repl.chatview import Status

        self.runtime: ChatRuntime | None = runtime
        self.status = Status()
        self.yes = yes

    async def ask(self, question: str) -> str:
        answer = "y" if self.yes else "n"
        note = "" if self.yes else " (no terminal: pass --yes to answer yes)"
        print(f"{render.safe(question.strip())} {answer}{note}", file=sys.stderr)
        return answer

    async def turn(self, line: str, *, mentions: bool = True) -> None:
        raise UsageError("a built-in command cannot start a turn in -p")


async def _run_builtin(runtime: ChatRuntime, options: ChatOptions, name: str, out: Output) -> int:
    """Run a REPL report command for ``-p``; its output on stdout (``--json``: in a
    document ``{"command", "output", "exit_code"}``; stream-json: a final ``result`` whose
    ``answer`` is the output)."""
    import contextlib
    import io

    from codebot_mcp.cli.repl.memory import NOTES_AND_SKILLS
    from codebot_mcp.cli.repl.repl_loop import REPORTS

    assert options.prompt is not None
    rest = options.prompt.strip()[len(name) :].strip()
    await runtime.manager.start_all()  # /tools and /skills show the servers' too
    captured = options.output_format != "text"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer) if captured else contextlib.nullcontext():
        if name in REPORTS:
            print(REPORTS[name](runtime))
        else:
            await NOTES_AND_SKILLS[name](_OneShotHost(runtime, options.yes), rest)
    out.finished = True
    if options.output_format == "json":
        render.print_json({"command": name, "output": buffer.getvalue(), "exit_code": 0})
    elif isinstance(out, StreamJsonOutput):
        out.writer.session_id = runtime.log.id if runtime.log else None
        answer = Answer(options.prompt, done=True)
        fields = result_fields(runtime, answer, final=True)
        fields.update(outcome="answer", exit_code=0, is_error=False, error=None)
        out.writer.emit(
            "result", **{**fields, "answer": buffer.getvalue(), "command": name}, prompts=1
        )
    return ExitCode.OK


def _custom_command(runtime: ChatRuntime, prompt: str) -> tuple[str, CustomCommand | None]:
    """``-p "/review src/app.py"``: a custom command's prompt; anything else as written."""
    import re

    from codebot_mcp.cli import extensions

    found = extensions.command_for(runtime.ext, prompt)
    if found is not None:
        command, text = found
        print(render.style(f"(/{command.name})", "2", sys.stderr), file=sys.stderr)
        return text, command
    head = prompt.strip().split(" ", 1)[0]
    if re.fullmatch(r"/[A-Za-z0-9_][A-Za-z0-9_.:-]*", head):
        names = ", ".join(f"/{n}" for n in runtime.ext.commands.commands) if runtime.ext else ""
        render.warn(
            f"'{head}' is not a custom command, so the prompt goes to "
            f"the model as written (custom commands: {names or 'none'})"
        )
    return prompt, None


def _list_for_resume(globals_: Globals) -> None:
    from codebot_mcp.core.agent import history as sessions

    settings = load_effective(globals_, warn=False).settings
    saved = sessions.list_sessions(settings.project_root or globals_.cwd)
    for item in saved[:20]:
        print(render.safe(sessions.describe(item)), file=sys.stderr)
    raise UsageError(
        "--resume needs a session ID with -p (no one can pick from a list)",
        hint="Pass one of the IDs above (--resume ID), or --continue for the latest.",
    )
