"""How a headless chat reports: text, the ``--json`` document, or stream-json events.

:class:`Answer` is one prompt and what became of it; an :class:`Output` renders a run's start,
its prompts and its end in one format (:func:`output_for`). Every end goes through here, a
failure at start included, so the three formats agree on outcome, exit code and error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codebot_mcp.cli import render
from codebot_mcp.core.errors import CodebotError, ExitCode, InterruptionError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatOptions, ChatRuntime
    from codebot_mcp.cli.repl.chatview import Status
    from codebot_mcp.cli.streamjson import EventWriter
    from codebot_mcp.core.agent.events import AgentEvents
    from codebot_mcp.core.agent.loop import Agent, RunResult
    from codebot_mcp.core.jobs.jobtable import Job


@dataclass
class Answer:
    """One prompt and what became of it."""

    prompt: str
    result: RunResult | None = None
    """The run's result; when it failed or was interrupted, what it did until then."""
    failure: CodebotError | None = None
    done: bool = False
    """The run ended (with an answer or an error); False: interrupted."""
    value: Any = None
    """The answer parsed and validated (``--output-schema``)."""

    @property
    def code(self) -> ExitCode:
        """The exit code this prompt ends with."""
        from codebot_mcp.core.agent.loop import Outcome

        if self.failure is not None:
            return self.failure.exit_code
        result = self.result
        if not self.done or result is None or result.outcome is Outcome.INTERRUPTED:
            return ExitCode.INTERRUPTED
        return ExitCode.EMPTY_ANSWER if result.outcome is Outcome.EMPTY else ExitCode.OK

    @property
    def outcome(self) -> str:
        """``answer``, ``empty_answer``, ``error`` or ``interrupted``."""
        if isinstance(self.failure, InterruptionError):
            return "interrupted"
        if self.failure is not None:
            return "error"
        code = self.code
        if code is ExitCode.INTERRUPTED:
            return "interrupted"
        return "empty_answer" if code is ExitCode.EMPTY_ANSWER else "answer"

    def error(self) -> dict[str, Any] | None:
        """``{"message", "hint", "exit_code"}``, or None when it ended well."""
        if self.failure is not None:
            return error_dict(self.failure)
        if self.code is ExitCode.INTERRUPTED:
            return error_dict(InterruptionError())
        return None


def error_dict(error: CodebotError) -> dict[str, Any]:
    """An error as ``--json`` and stream-json show it."""
    return {"message": error.message, "hint": error.hint, "exit_code": int(error.exit_code)}


def output_for(options: ChatOptions) -> Output:
    """The renderer of ``--output-format``."""
    if options.output_format == "json":
        return JsonOutput(options)
    if options.output_format == "stream-json":
        return StreamJsonOutput(options)
    return Output(options)


class Output:
    """Text: the answer on stdout, tool activity and a status line on stderr."""

    def __init__(self, options: ChatOptions) -> None:
        self.options = options
        self.runtime: ChatRuntime | None = None
        self.status: Status | None = None
        self.finished = False
        """The run's end was rendered (a later error is not rendered again)."""
        self.killed: list[dict[str, Any]] = []
        """Background jobs killed at the end (``jobs_killed`` in ``--json``)."""

    def view(self, runtime: ChatRuntime) -> AgentEvents:
        """What renders the agent's events."""
        from codebot_mcp.cli.repl.chatview import Status, TurnView
        from codebot_mcp.core.tools import live

        self.status = Status()
        view = TurnView(self.status, stream_text=False, previews=self.options.verbose)
        if self.options.verbose:
            live.WATCHER.set(view.watch)  # bash's output streams to stderr as it comes
        return view

    def started(self, runtime: ChatRuntime) -> None:
        """The servers are up; the first prompt is next."""

    def prompted(self, answer: Answer) -> None:
        """A prompt is about to be answered."""

    def answered(self, answer: Answer) -> None:
        """A prompt of several (``--input-format stream-json``) ended."""

    def input_error(self, number: int, why: str) -> None:
        """An input line was skipped."""
        render.warn(f"stdin line {number}: {why}")

    def ended(self, answer: Answer, code: int, prompts: int) -> None:
        """The run ended with ``answer`` (the last one) and exit ``code``."""
        self.finished = True
        result = answer.result
        if answer.failure is not None and result is not None and result.text:
            print(render.safe(result.text))  # a dropped stream: what arrived is kept
        elif code == ExitCode.OK and result is not None:
            print(render.safe(_answer_text(answer)))

    def fail(self, error: CodebotError) -> None:
        """The run failed outside a prompt (at start): the error is printed by the caller."""
        self.finished = True

    def jobs_killed(self, jobs: list[Job]) -> None:
        """Background jobs still running at the end were killed: a warning each (stderr)."""
        self.killed = [job.summary() for job in jobs]
        for job in jobs:
            render.warn(
                f"background job {job.id} ({render.safe(job.command, one_line=True)[:80]}) "
                f"was still running after {job.runtime():.1f}s when the answer came: killed "
                "(-p does not wait for background jobs)"
            )


def _answer_text(answer: Answer) -> str:
    """The answer; with ``--output-schema``, the validated JSON (no fence, one line)."""
    import json

    if answer.value is not None or (answer.result and answer.result.text.strip() == "null"):
        return json.dumps(answer.value, ensure_ascii=False)
    return answer.result.text if answer.result else ""


class JsonOutput(Output):
    """``--json``: one document on stdout when the run ends, whatever ended it."""

    def ended(self, answer: Answer, code: int, prompts: int) -> None:
        """The transcript (with the background jobs killed at the end)."""
        self._print(transcript(self.runtime, answer) | {"jobs_killed": self.killed})

    def fail(self, error: CodebotError) -> None:
        """The transcript of a run that failed outside a prompt (at start, usually)."""
        if not self.finished:
            answer = Answer("", failure=error, done=True)
            self._print(transcript(self.runtime, answer) | {"jobs_killed": self.killed})

    def _print(self, document: dict[str, Any]) -> None:
        from codebot_mcp.core.agent.history import scrubbed

        self.finished = True
        render.print_json(scrubbed(document, render.REDACTOR))


class StreamJsonOutput(Output):
    """``--output-format stream-json``: events as JSON lines (``cli.streamjson``)."""

    def __init__(self, options: ChatOptions) -> None:
        super().__init__(options)
        from codebot_mcp.cli.streamjson import EventWriter

        self.writer: EventWriter = EventWriter()

    def view(self, runtime: ChatRuntime) -> AgentEvents:
        """The stream-json renderer of the agent's events."""
        from codebot_mcp.cli.streamjson import StreamJsonView

        return StreamJsonView(
            self.writer, runtime.session.find_tool, partial=self.options.include_partial
        )

    def started(self, runtime: ChatRuntime) -> None:
        """``init``: the session, model, endpoint, servers, tools, sandbox and modes."""
        self.writer.session_id = runtime.log.id if runtime.log else None
        self.writer.emit("init", **init_fields(runtime, self.options))

    def prompted(self, answer: Answer) -> None:
        """``user``: the message being answered."""
        self.writer.emit("user", message={"role": "user", "content": answer.prompt})

    def answered(self, answer: Answer) -> None:
        """``result`` of one message (``final`` false; the last line of the run is the final
        one)."""
        self.writer.emit("result", **result_fields(self.runtime, answer, final=False))

    def input_error(self, number: int, why: str) -> None:
        """``input_error``, and the warning on stderr."""
        super().input_error(number, why)
        self.writer.emit("input_error", line=number, message=why)

    def jobs_killed(self, jobs: list[Job]) -> None:
        """``jobs_killed`` before the final ``result`` (when there were any), and the
        warnings on stderr."""
        super().jobs_killed(jobs)
        if self.killed:
            self.writer.emit("jobs_killed", jobs=self.killed)

    def ended(self, answer: Answer, code: int, prompts: int) -> None:
        """The final ``result``."""
        self.finished = True
        fields = result_fields(self.runtime, answer, final=True)
        self.writer.emit("result", **{**fields, "exit_code": int(code), "prompts": prompts})

    def fail(self, error: CodebotError) -> None:
        """The final ``result`` of a run that failed outside a prompt."""
        if self.finished:
            return
        self.finished = True
        answer = Answer("", failure=error, done=True)
        self.writer.emit("result", **result_fields(self.runtime, answer, final=True), prompts=0)


def init_fields(runtime: ChatRuntime, options: ChatOptions) -> dict[str, Any]:
    """The ``init`` event's fields (no secrets: the endpoint loses its credentials)."""
    from codebot_mcp.cli.streamjson import FORMAT_VERSION
    from codebot_mcp.core import __version__
    from codebot_mcp.core.secrets.redact import redact_url

    agent = runtime.agent
    servers: list[dict[str, Any]] = []
    for status in runtime.manager.status():
        failure = status.failure
        servers.append(
            {
                "name": status.name,
                "status": status.status,
                "tools": status.tool_count,
                "error": failure.message if failure else None,
                "stage": failure.stage if failure else None,
            }
        )
    servers += [
        {"name": n, "status": "untrusted", "tools": 0, "error": None, "stage": None}
        for n in runtime.untrusted
    ]
    sandbox = runtime.sandbox
    mode = "plan" if options.plan else "yes" if options.yes else "default"
    return {
        "version": FORMAT_VERSION,
        "codebot": __version__,
        "cwd": str(runtime.globals.cwd),
        "model": agent.model.config.model if agent else None,
        "endpoint": redact_url(agent.model.config.url) if agent else None,
        "servers": servers,
        "tools": [t.name for t in runtime.session.active_tools],
        "sandbox": {"mode": sandbox.mode, "network": sandbox.network} if sandbox else None,
        "permission_mode": mode,
        "allow": list(options.allow),
        "input_format": options.input_format,
        "include_partial": options.include_partial,
        "output_schema": str(options.output_schema.path) if options.output_schema else None,
    }


def result_fields(runtime: ChatRuntime | None, answer: Answer, *, final: bool) -> dict[str, Any]:
    """A ``result`` event's fields: outcome, exit code, answer, error, usage."""
    agent = runtime.agent if runtime else None
    result = answer.result
    return {
        "final": final,
        "outcome": answer.outcome,
        "exit_code": int(answer.code),
        "is_error": answer.code != ExitCode.OK,
        "answer": result.text if result else "",
        "structured_output": answer.value,
        "finish_reason": result.finish_reason if result else None,
        "turns": result.turns if result else 0,
        "tool_calls": len(result.tool_calls) if result else 0,
        "usage": usage_dict(agent, result),
        "model": agent.model.config.model if agent else None,
        "served_model": agent.model.served_model if agent else None,
        "error": answer.error(),
    }


def usage_dict(agent: Agent | None, result: RunResult | None) -> dict[str, Any]:
    """Usage of the run, its last turn and the session, for ``--json`` (null: unknown)."""
    from codebot_mcp.core.model.stream import Usage

    return {
        **(result.usage if result else Usage()).as_dict(),
        "last_turn": result.last_usage.as_dict() if result and result.last_usage else None,
        "session": agent.usage.as_dict() if agent else None,
        "summary_requests": agent.budget.summary_requests if agent else 0,
    }


def transcript(runtime: ChatRuntime | None, answer: Answer) -> dict[str, Any]:
    """The ``--json`` document: outcome, messages, tool calls with results, usage, error
    (``runtime`` None: the run failed before it had one; the keys are all there)."""
    from codebot_mcp.cli.streamjson import compaction_dict

    agent = runtime.agent if runtime else None
    result = answer.result
    records = result.tool_calls if result else []
    return {
        "model": agent.model.config.model if agent else None,
        "served_model": agent.model.served_model if agent else None,
        "api": agent.model.config.api if agent else None,
        "session_id": runtime.log.id if runtime and runtime.log else None,
        "outcome": answer.outcome,
        "answer": result.text if result else "",
        "structured_output": answer.value,
        "finish_reason": result.finish_reason if result else None,
        "reasoning": result.reasoning if result else [],
        "turns": result.turns if result else 0,
        "usage": usage_dict(agent, result),
        "compactions": [compaction_dict(c) for c in (result.compactions if result else [])],
        "trust_changes": list(result.trust_changes) if result else [],
        "tool_calls": [
            {
                "id": r.call.id,
                "name": r.call.name,
                "arguments": r.call.arguments,
                "result": r.result.text,
                "is_error": r.result.is_error,
                "denied": r.denied,
                "rejected": r.rejected,
                "reason": r.reason,
                "seconds": round(r.seconds, 3),
                "sandbox": r.result.data.get("sandbox"),
                **(
                    {"sandbox_created": r.result.data["sandbox_created"]}
                    if r.result.data.get("sandbox_created")
                    else {}
                ),
            }
            for r in records
        ],
        "sandbox": runtime.sandbox.mode if runtime and runtime.sandbox else None,
        "messages": runtime.session.history if runtime else [],
        "error": answer.error(),
        "exit_code": int(answer.code),
    }
