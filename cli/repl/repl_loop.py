"""The interactive loop of ``codebot chat``: prompt-toolkit input, slash commands, approvals.

MCP servers connect in the background, so the prompt is usable at once. Ctrl-C during a
turn cancels it (and its tool calls); at an empty prompt, Ctrl-C twice or Ctrl-D exits.

Size: one idea, the session at the prompt (read a line, dispatch it, run the turn); what a
command or a turn needs beyond a call or two lives beside it (chatview, reports, attach...).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from codebot_mcp.cli import extensions, render
from codebot_mcp.cli.chat_parts import settle_trust
from codebot_mcp.cli.chat_runtime import ChatOptions, ChatRuntime, open_runtime
from codebot_mcp.cli.render import safe
from codebot_mcp.cli.repl.attach import Attachments
from codebot_mcp.cli.repl.chatview import Status, TurnView, full_args, report_mcp
from codebot_mcp.cli.repl.mcp import ReplAgent, expand_mentions, progress_hook, run_prompt_command
from codebot_mcp.cli.repl.memory import NOTES_AND_SKILLS
from codebot_mcp.cli.repl.repl_completion import SLASH_COMMANDS, MCPCompleter
from codebot_mcp.cli.repl.reports import (
    HELP,
    approval_details,
    color_diff,
    context_report,
    sandbox_report,
    todos_report,
    tools_report,
    usage_line,
    usage_report,
)
from codebot_mcp.cli.runtime import Globals, load_unfiltered_settings
from codebot_mcp.cli.signals import sigint_cancels
from codebot_mcp.cli.trustview import describe_all
from codebot_mcp.core import gcpause
from codebot_mcp.core.agent.permissions import Answer, ApprovalRequest
from codebot_mcp.core.config import paths, trust
from codebot_mcp.core.errors import CodebotError, ExitCode, ModelError

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from codebot_mcp.core.model.stream import ToolCall
    from codebot_mcp.core.slashcommands.templates import CustomCommand
    from codebot_mcp.core.tools.base import ToolResult


REPORTS: dict[str, Callable[[ChatRuntime], str]] = {
    "/help": lambda runtime: f"{HELP}\n{extensions.commands_help(runtime.ext)}",
    "/tools": lambda runtime: tools_report(runtime.session),
    "/context": context_report,
    "/usage": usage_report,
    "/sandbox": sandbox_report,
    "/hooks": lambda runtime: extensions.hooks_report(runtime.ext),
    "/agents": lambda runtime: extensions.agents_report(runtime.ext, runtime.agent),
    "/todos": todos_report,
}
"""The commands that print a report of the runtime, and nothing else."""


def history_file() -> Path:
    """The prompt history, private to the user (0600)."""
    path = paths.private_dir(paths.state_dir()) / "chat_history"
    os.close(os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600))
    path.chmod(0o600)
    return path


class Repl:
    """One interactive session."""

    def __init__(self, pt_input: Any = None, pt_output: Any = None) -> None:
        self.pt_input = pt_input
        self.pt_output = pt_output
        self.status = Status()
        self.turn_scope: anyio.CancelScope | None = None
        self.runtime: ChatRuntime | None = None
        self.attachments = Attachments()  # images: --image, paths and @./shot.png in prompts
        self.declined: set[str] = set()
        """Digests of project server sections the user declined to trust: not asked again."""
        from codebot_mcp.cli.repl.status import UpdateNotices

        self.updates = UpdateNotices()
        self.answers = ReplAgent(self)
        """Answers the servers' requests: elicitation, sampling, roots."""
        self.last_result: tuple[ToolCall, ToolResult] | None = None
        """The last finished tool call and its result, for ``/expand`` and Ctrl-O."""

    def _session(self, **kwargs: Any) -> PromptSession[str]:
        from prompt_toolkit import PromptSession

        return PromptSession(input=self.pt_input, output=self.pt_output, **kwargs)

    def completer(self) -> MCPCompleter:
        """The REPL's completer: its slash commands, and its runtime's servers once they exist."""
        completer = MCPCompleter(
            lambda: self.runtime.manager if self.runtime else None, SLASH_COMMANDS
        )
        completer.custom_of = self._custom_commands
        return completer

    def _custom_commands(self) -> list[tuple[str, str]]:
        """``(/name, description)`` of the custom commands, for completion."""
        ext = self.runtime.ext if self.runtime else None
        if ext is None:
            return []
        return [(f"/{c.name}", c.description) for c in ext.commands.commands.values()]

    async def ask(self, question: str) -> str:
        """One line typed at a prompt of its own (a server's question); what was typed before
        the question appeared is thrown away first, as for :meth:`ask_key`."""
        from prompt_toolkit.application.current import get_app_session

        from codebot_mcp.cli.repl.repl_keys import flush_typeahead, question_open

        flush_typeahead(self.pt_input if self.pt_input is not None else get_app_session().input)
        with question_open("line"):
            return await self._session().prompt_async(question, handle_sigint=False)

    async def ask_key(self, question: str, keys: str, enter: str | None = None) -> str:
        """One key, no Enter (``cli.repl.repl_keys``): approvals, trust, rewind. Keys typed
        before the question are thrown away first; Esc is "n"."""
        from codebot_mcp.cli.repl.repl_keys import ask_key

        return await ask_key(
            question, keys, pt_input=self.pt_input, pt_output=self.pt_output, enter=enter
        )

    def _input_session(self) -> PromptSession[str]:
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

        keys = KeyBindings()

        @keys.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @keys.add("c-o")
        def _expand(event: KeyPressEvent) -> None:
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(self.expand)  # printed above the prompt; the typed line stays

        @keys.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()  # first Ctrl-C clears the line
            else:
                event.app.exit(exception=KeyboardInterrupt())

        class PrivateHistory(FileHistory):
            """Lines go to the history file with every known secret scrubbed."""

            def store_string(self, string: str) -> None:
                super().store_string(render.REDACTOR(string))

        history = PrivateHistory(str(history_file()))
        return self._session(history=history, key_bindings=keys, completer=self.completer())

    async def approve(self, request: ApprovalRequest) -> Answer:
        """Ask the user about one tool call: yes once, always (this session), or no."""
        self.status.clear()
        print(
            f"{render.style('?', '33;1', sys.stderr)} "
            f"{render.style(render.safe(request.tool, one_line=True), '1', sys.stderr)}"
            f"{full_args(dict(request.arguments), shutil.get_terminal_size().columns)}\n"
            + approval_details(request),
            file=sys.stderr,
        )
        if request.preview:
            print(color_diff(request.preview, sys.stderr), file=sys.stderr)
        try:
            # handle_sigint=False: prompt-toolkit would otherwise remove the turn's SIGINT
            # handler on return, and a later Ctrl-C during the approved call would be lost.
            choice = await self.ask_key("  allow? [y]es once, [a]lways, [n]o: ", "yan")
        except (KeyboardInterrupt, EOFError):
            if self.turn_scope is not None:
                self.turn_scope.cancel()
            return Answer.NO
        return {"y": Answer.ONCE, "a": Answer.ALWAYS}.get(choice, Answer.NO)

    async def ask_trust(self, result: trust.TrustCheck) -> bool:
        """Ask once whether to trust the project's servers; a "no" is remembered."""
        if result.digest in self.declined:
            return False
        state = "changed since it was trusted" if result.changed else "new"
        where = result.project_file or result.root
        lines = [f"{render.safe(where)} ({state}) would start or set:"]
        lines += [f"  {render.safe(line, one_line=True)}" for line in describe_all(result)]
        print("\n".join(lines), file=sys.stderr)
        try:
            text = await self.ask_key(
                "Trust this project and start them? [y]es (remember) / [n]o (skip for now): ",
                "yn",
            )
        except (KeyboardInterrupt, EOFError):
            text = ""
        if text == "y":
            return True
        self.declined.add(result.digest)
        return False

    async def main(self, globals_: Globals, options: ChatOptions) -> int:
        """Run until /exit, Ctrl-D or a double Ctrl-C."""
        from prompt_toolkit.patch_stdout import patch_stdout

        async with open_runtime(
            globals_,
            options,
            self.approve,
            need_model=False,
            ask_trust=self.ask_trust,
            user_agent=self.answers,
            on_progress=progress_hook(self.status),
        ) as runtime:
            self.runtime = runtime
            if runtime.model_error is not None:
                render.error(runtime.model_error)
            if options.resume == "":
                await self._resume(runtime, "")
            elif runtime.session.history:
                print(
                    f"(resumed session {runtime.log.id}: {len(runtime.session.history)} messages)",
                    file=sys.stderr,
                )
            from codebot_mcp.cli.repl.welcome import show_first_screen

            show_first_screen(runtime)
            self.attachments.load_flags(options.images, runtime)
            prompt = self._input_session()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._connect, runtime)
                interrupted = False
                while True:
                    await runtime.session.before_prompt()
                    self.updates.show(runtime.manager)
                    marker = "plan› " if runtime.session.plan_mode else "› "
                    try:
                        with patch_stdout(raw=True):
                            line = await prompt.prompt_async(marker)
                    except KeyboardInterrupt:
                        if interrupted:
                            break
                        interrupted = True
                        print("(Ctrl-C again or Ctrl-D to exit)", file=sys.stderr)
                        continue
                    except EOFError:
                        break
                    interrupted = False
                    if not line.strip():
                        continue
                    if line.strip().startswith("/mcp__"):
                        await run_prompt_command(self, line)
                        continue
                    if custom := extensions.command_for(runtime.ext, line):
                        await self.turn(custom[1], command=custom[0])
                        continue
                    if line.strip().startswith("/"):
                        if await self.command(line.strip()) == "exit":
                            break
                        continue
                    await self.turn(line)
                runtime.end_reason = "prompt_input_exit"  # /exit, Ctrl-D, Ctrl-C twice
                tg.cancel_scope.cancel()
        return ExitCode.OK

    async def _connect(self, runtime: ChatRuntime) -> None:
        if not runtime.settings.servers:
            gcpause.release()  # nothing to connect: the session's work begins (core.gcpause)
            return
        await runtime.manager.start_all()
        gcpause.release()  # connected: the session's work begins (core.gcpause)
        # The prompt may end (Ctrl-D) just as the servers connect, closing the stdout proxy
        # prompt-toolkit had put in place; the line is then not worth a crash.
        with suppress(ValueError):
            report_mcp(runtime.manager)
        await self._resume_tasks(runtime)

    async def _resume_tasks(self, runtime: ChatRuntime) -> None:
        """Tasks a resumed session left running are followed to their end first."""
        for line in await runtime.resume_tasks():
            with suppress(ValueError):
                print(render.safe(line), file=sys.stderr)

    async def turn(
        self, line: str, *, mentions: bool = True, command: CustomCommand | None = None
    ) -> None:
        """One prompt to the agent (``command``: the custom command it comes from); errors are
        shown and the REPL goes on."""
        runtime, asked = self.runtime, line  # images come from what was typed, not inserted
        assert runtime is not None
        if runtime.agent is None:
            assert runtime.model_error is not None
            render.error(runtime.model_error)
            return
        from codebot_mcp.cli.repl.chatview import empty_answer_message
        from codebot_mcp.core.agent.loop import Outcome

        view = TurnView(self.status, markdown=True, on_result=self._keep_result)
        result = None
        from codebot_mcp.core.tools import live

        watching = live.WATCHER.set(view.watch)  # bash output streams into its preview
        with anyio.CancelScope() as scope, sigint_cancels(scope):
            self.turn_scope = scope
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.status.run)
                try:
                    running = extensions.running(runtime.ext, runtime.agent, command, asked)
                    async with running as line:  # !`cmd` and @path first, then mentions
                        if mentions:
                            line = await expand_mentions(line, runtime.manager, runtime.untrusted)
                        if (pictures := await self.attachments.take(asked, runtime)) is not None:
                            result = await runtime.agent.run(line, view, pictures)
                except CodebotError as exc:
                    view.end_line()  # the error starts on its own line, below any partial text
                    render.error(exc)
                finally:
                    tg.cancel_scope.cancel()
        live.WATCHER.reset(watching)
        view.end_line()
        self.turn_scope = None
        if scope.cancelled_caught:
            print("(interrupted)", file=sys.stderr)
        if result is not None and result.outcome is Outcome.EMPTY:
            render.warn(empty_answer_message(result))
        if runtime.log.error:
            render.warn(runtime.log.error)
            runtime.log.error = None
        agent = runtime.agent
        if result is not None and agent.usage.total > runtime.settings.usage_line_after:
            print(render.style(usage_line(agent, result), "2", sys.stderr), file=sys.stderr)

    def _keep_result(self, call: ToolCall, result: ToolResult) -> None:
        self.last_result = (call, result)

    def expand(self) -> None:
        """``/expand`` and Ctrl-O: the last tool result, whole (secrets masked, controls
        escaped)."""
        from codebot_mcp.cli.repl.preview import whole

        if self.last_result is None:
            print("(no tool result yet in this session)", file=sys.stderr)
            return
        call, result = self.last_result
        name = render.safe(call.name, one_line=True)
        state = "error" if result.is_error else "result"
        print(render.style(f"── {name} {state} ──", "2", sys.stderr), file=sys.stderr)
        print(whole(result.text))

    async def command(self, line: str) -> str | None:  # noqa: C901 (a dispatcher: a branch a command)
        """Run a slash command; returns "exit" to leave."""
        runtime = self.runtime
        assert runtime is not None
        session = runtime.session
        name, _, rest = line.partition(" ")
        if name in ("/exit", "/quit"):
            return "exit"
        report = REPORTS.get(name)
        if report is not None:
            print(report(runtime))
        elif name == "/expand":
            self.expand()
        elif name == "/jobs":
            from codebot_mcp.cli.repl.reports import jobs_command

            await jobs_command(runtime, rest.strip())
        elif name == "/export":
            from codebot_mcp.cli.repl.exportfile import repl_export

            repl_export(runtime, rest.strip())
        elif name == "/model":
            from codebot_mcp.cli.repl.welcome import switch_model

            await switch_model(runtime, rest.strip())
        elif name == "/clear":
            await runtime.session_ended("clear")
            session.clear()
            print("(conversation cleared)")
            await runtime.session_started("clear")
        elif name == "/plan":
            session.set_plan_mode(not session.plan_mode)
            state = "on: read-only tools" if session.plan_mode else "off"
            print(f"(plan mode {state}; {render.count(len(session.active_tools), 'tool')} active)")
        elif name == "/compact":
            await self._compact(runtime, rest.strip() or None)
        elif name == "/resume":
            await self._resume(runtime, rest.strip())
        elif name == "/rewind":
            from codebot_mcp.cli.repl.repl_rewind import rewind

            await rewind(runtime, rest.strip(), self.ask_key)
        elif name in NOTES_AND_SKILLS:
            await NOTES_AND_SKILLS[name](self, rest.strip())
        elif name == "/mcp" and rest.strip() == "reload":
            await self._reload(runtime)
        elif name == "/mcp" and rest.strip().startswith("login"):
            from codebot_mcp.cli.login import repl_login

            await repl_login(runtime, rest.strip()[len("login") :].strip())
        elif name == "/mcp":
            from codebot_mcp.cli.repl.status import show_mcp

            await show_mcp(runtime)
        else:
            render.error_line(f"unknown command {name}; /help lists the commands")
        return None

    async def _compact(self, runtime: ChatRuntime, focus: str | None) -> None:
        from codebot_mcp.cli.repl.chatview import describe_compaction

        agent = runtime.agent
        if agent is None:
            assert runtime.model_error is not None
            render.error(runtime.model_error)
            return
        self.status.set("compacting…")
        with anyio.CancelScope() as scope, sigint_cancels(scope):
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.status.run)
                try:
                    done = await agent.compact(focus, TurnView(self.status))
                except CodebotError as exc:
                    self.status.clear()
                    render.error(exc)
                    return
                finally:
                    tg.cancel_scope.cancel()
        if scope.cancelled_caught:
            print("(interrupted)", file=sys.stderr)
        elif done is None:
            print("(nothing to compact yet)")
        else:
            print(describe_compaction(done))

    async def _resume(self, runtime: ChatRuntime, session_id: str) -> None:
        """``/resume [ID]`` (and ``--resume`` without ID): pick a saved session, continue it."""
        from codebot_mcp.core.agent import history as sessions

        project = runtime.settings.project_root or runtime.globals.cwd
        if not session_id:
            saved = [s for s in sessions.list_sessions(project) if s.id != runtime.log.id][:20]
            if not saved:
                print("(no saved sessions for this project)")
                return
            for n, item in enumerate(saved, start=1):
                print(f"{n:>3}. {safe(sessions.describe(item))}")
            try:
                text = await self._session().prompt_async(
                    "resume which? [number or ID, empty to cancel]: ", handle_sigint=False
                )
            except (KeyboardInterrupt, EOFError):
                text = ""
            choice = text.strip()
            if not choice:
                return
            if choice.isdigit() and 1 <= int(choice) <= len(saved):
                choice = saved[int(choice) - 1].id
            session_id = choice
        await runtime.session_ended("resume")
        try:
            runtime.start_log(session_id)
        except CodebotError as exc:
            render.error(exc)
            return
        count = len(runtime.session.history)
        print(f"(resumed session {session_id}: {count} messages; current tools)")
        await runtime.session_started("resume")
        await self._resume_tasks(runtime)

    async def _reload(self, runtime: ChatRuntime) -> None:
        """Re-read settings: servers (through trust again), permission rules, limits, model."""
        try:
            loaded = load_unfiltered_settings(runtime.globals)  # the extensions review it
        except CodebotError as exc:
            render.error(exc)
            return
        settings, untrusted = await settle_trust(runtime.globals, loaded, self.ask_trust)
        roots_before = self.answers.roots()
        await runtime.reload(settings, loaded, untrusted)
        report_mcp(runtime.manager)
        try:
            await runtime.apply(settings)
        except ModelError as exc:
            render.error(exc)
        if self.answers.roots() != roots_before:
            await runtime.manager.roots_changed()
        model = runtime.agent.model.config if runtime.agent else None
        using = f"; model {model.model} at {model.url}" if model else ""
        active = render.count(len(runtime.session.active_tools), "tool")
        print(f"(settings reloaded; {active} active{using})")


async def repl(globals_: Globals, options: ChatOptions, pt_input: Any = None) -> int:
    """Entry point for ``codebot chat`` without ``-p``."""
    return await Repl(pt_input).main(globals_, options)
