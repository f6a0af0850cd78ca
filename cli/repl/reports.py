"""What the REPL prints for its commands and approvals: /tools, /context, /usage, diffs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codebot_mcp.cli import render
from codebot_mcp.cli.render import safe
from codebot_mcp.core.agent.permissions import ApprovalRequest

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime


def todo_checklist(todos: list[dict[str, Any]], stream: Any) -> str:
    """The plan as a checklist, one item a line: ``☐``/``◐``/``☑`` (``[ ]``/``[~]``/``[x]``
    where the stream cannot print them), the model's words escaped; the item in progress
    bold, done items dimmed."""
    from codebot_mcp.core.tools.builtin.todo import Todo, checklist

    items = [
        Todo(safe(t.get("content", ""), one_line=True), str(t.get("status", "pending")))
        for t in todos
    ]
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "☐◐☑".encode(encoding)
        plain = False
    except (UnicodeEncodeError, LookupError):
        plain = True
    lines: list[str] = []
    for item, line in zip(items, checklist(items, ascii_marks=plain), strict=True):
        code = {"in_progress": "1", "completed": "2"}.get(item.status, "")
        lines.append("  " + (render.style(line, code, stream) if code else line))
    return "\n".join(lines)


def todos_report(runtime: ChatRuntime) -> str:
    """``/todos``: the session's plan, or a line saying there is none."""
    import sys

    todos = runtime.session.todos
    if not todos.items:
        return "(no todo list in this session; the model writes one with todo_write)"
    done = sum(t.status == "completed" for t in todos.items)
    head = f"todo list: {done}/{len(todos.items)} completed"
    return f"{head}\n{todo_checklist(todos.as_json(), sys.stdout)}"


def jobs_report(runtime: ChatRuntime) -> str:
    """``/jobs``: the session's background jobs (id, state, runtime, output, command)."""
    jobs = runtime.jobs
    if jobs is None or not jobs.jobs:
        return "(no background jobs in this session; bash starts one with run_in_background)"
    rows = [["id", "state", "runtime", "output", "command"]]
    for job in jobs.jobs.values():
        rows.append(
            [
                job.id,
                job.status(),
                f"{job.runtime():.1f}s",
                _size(job.output.total),
                render.first_line(safe(job.command), 60),
            ]
        )
    running = len(jobs.running())
    head = f"background jobs: {running} running (/jobs kill ID ends one)"
    return f"{head}\n{render.table(rows, indent='  ')}"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


async def jobs_command(runtime: ChatRuntime, rest: str) -> None:
    """``/jobs`` (the list) and ``/jobs kill ID``."""
    verb, _, job_id = rest.partition(" ")
    if verb == "kill":
        print(await kill_job(runtime, job_id.strip()))
    elif verb:
        render.error_line(f"/jobs {safe(verb, one_line=True)}: use /jobs, or /jobs kill ID")
    else:
        print(jobs_report(runtime))


async def kill_job(runtime: ChatRuntime, job_id: str) -> str:
    """``/jobs kill ID``: end that job's whole tree; what became of it."""
    jobs = runtime.jobs
    job = jobs.find(job_id) if jobs is not None and job_id else None
    if jobs is None or job is None:
        known = ", ".join(jobs.jobs) if jobs is not None and jobs.jobs else "none"
        return (
            f"no background job {safe(job_id, one_line=True)!r} (jobs: {known}); /jobs lists them"
        )
    if not await jobs.kill(job):
        return f"job {job.id} had ended ({job.status()})"
    return f"killed job {job.id} ({job.status()} after {job.runtime():.1f}s)"


def color_diff(diff: str, stream: Any) -> str:
    """A unified diff, indented, with ``+``/``-``/``@@`` lines coloured on a terminal."""
    out: list[str] = []
    for line in safe(diff).splitlines():
        if line.startswith(("+++", "---")):
            code = "1"
        elif line.startswith("+"):
            code = "32"
        elif line.startswith("-"):
            code = "31"
        elif line.startswith("@@"):
            code = "36"
        else:
            code = ""
        out.append("    " + (render.style(line, code, stream) if code else line))
    return "\n".join(out)


def approval_details(request: ApprovalRequest) -> str:
    """Why the gate asks: the capability, why the tool was classified so, and the rule; for a
    file tool, the resolved path (what a symlink or ``..`` really leads to)."""
    permission = request.permission
    capability = permission.capability.value
    if request.warned:  # changed since its pin or its "always", or a served skill
        because = request.reason
    elif request.rule is not None:
        because = f"the settings rule {request.rule} asks first"
    else:
        because = f"no permission rule matches, and {capability} tools ask by default"
    if request.rule is None and request.outside is not None:
        because = request.outside  # outside the root, or into a hidden path
    reason = render.safe(permission.reason, one_line=True)
    because = render.safe(because, one_line=True)
    text = f"  capability: {capability} ({reason})\n  asks because: {because}"
    if request.sandbox is not None:
        text += f"\n  sandbox: {render.safe(request.sandbox, one_line=True)}"
    if request.detail is not None:
        text += f"\n  resolved path: {render.safe(request.detail, one_line=True)}"
    return text


def sandbox_report(runtime: ChatRuntime) -> str:
    """``/sandbox``: the mode, network, writable paths and what the kernel supports."""
    sandbox = runtime.sandbox
    if sandbox is None:
        return "sandbox: none"
    return "\n".join(safe(line) for line in ["sandbox:", *(f"  {x}" for x in sandbox.report())])


def tools_report(session: Any) -> str:
    """``/tools``: what the request carries, then (with tool search) what waits behind it."""

    def row(t: Any) -> list[str]:
        return [
            t.name,
            t.info.permission.capability.value,
            render.first_line(safe(t.description), 60),
        ]

    offered = session.offered_tools
    lines = [
        f"loaded ({len(offered)}, in the request):",
        render.table([row(t) for t in offered], indent="  "),
    ]
    deferred = session.search.deferred if session.search_on else []
    if deferred:
        from codebot_mcp.core.agent.prompt import server_of
        from codebot_mcp.core.tools.toolsearch import short_name

        lines.append(f"deferred ({len(deferred)}, load with search_tools):")
        by_server: dict[str, list[str]] = {}
        for tool in deferred:
            by_server.setdefault(server_of(tool), []).append(short_name(tool))
        for server, names in sorted(by_server.items()):
            lines.append(_deferred_line(server, sorted(names)))
    else:
        lines.append("tool search: off (every tool is in the request)")
    return "\n".join(lines)


DEFERRED_SHOWN = 40
"""Names listed per server by ``/tools``; the rest are counted."""


def _deferred_line(server: str, names: list[str]) -> str:
    import shutil
    import textwrap

    shown = ", ".join(render.safe(n, one_line=True) for n in names[:DEFERRED_SHOWN])
    if len(names) > DEFERRED_SHOWN:
        shown += f", … and {len(names) - DEFERRED_SHOWN} more"
    head = f"{render.safe(server, one_line=True)} ({len(names)}): "
    width = max(40, shutil.get_terminal_size().columns - 2)
    return textwrap.fill(
        head + shown, width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False
    )


def context_report(runtime: ChatRuntime) -> str:
    """``/context``: system blocks, built-in tools, MCP tools per server, history, free."""
    from codebot_mcp.core.agent.context import breakdown
    from codebot_mcp.core.agent.prompt import server_of
    from codebot_mcp.core.model.tokens import window_for
    from codebot_mcp.core.tools.base import is_mcp_tool, tool_schema

    session = runtime.session
    agent = runtime.agent
    window = agent.budget.window if agent else window_for("", runtime.settings.context_window)
    offered = session.offered_tools
    builtin = [tool_schema(t) for t in offered if not is_mcp_tool(t)]
    mcp: dict[str, list[Any]] = {}
    for tool in offered:
        if is_mcp_tool(tool):
            mcp.setdefault(server_of(tool), []).append(tool_schema(tool))
    rows = breakdown(session.blocks, builtin, mcp, session.history, window)
    table = [[r.label, f"{r.tokens:,}", f"{100 * r.tokens / window:.1f}%"] for r in rows]
    head = f"context window: {window:,} tokens, {_window_source(runtime, window)}"
    head += "\n(compacts at ~80%; rows are estimates)"
    counted = agent.budget.last_counted if agent else None
    if counted:
        head += f"\nlast request: {counted:,} prompt tokens, as counted by the API"
    if agent is not None and agent.usage.reasoning_tokens:
        last = agent.last.last_usage if agent.last else None
        head += (
            f"\nreasoning: {last.reasoning_tokens if last else 0:,} tokens in the last "
            f"answer, {agent.usage.reasoning_tokens:,} this session (output tokens; "
            f"{reasoning_kept(session.history)} reasoning item(s) go back with the history)"
        )
    text = head + "\n" + render.table(table, indent="  ")
    deferred = session.search.deferred if session.search_on else []
    if deferred:
        from codebot_mcp.core.model.tokens import estimate

        saved = estimate([tool_schema(t) for t in deferred])
        text += (
            f"\ntool search: on; {len(deferred)} MCP tools deferred, ~{saved:,} tokens of "
            "schemas not sent (their names are in system: dynamic; /tools lists them)"
        )
    return text


def _window_source(runtime: ChatRuntime, window: int) -> str:
    """Where the window comes from: a server's error, the setting, the table, the default."""
    from codebot_mcp.core.model.tokens import known_window, window_for

    configured = runtime.settings.context_window
    config = runtime.agent.model.config if runtime.agent else None
    model = config.model if config else ""
    reported = config.window if config else None
    if window != window_for(model, configured, reported):
        return "learned from the server's error"
    if configured:
        return "from 'context_window' in settings"
    if reported:
        return "as the model server reports it (GET /models)"
    if known_window(model):
        return f"the known window of {render.safe(model, one_line=True)}"
    return "the default (set 'context_window' in settings.json for your model)"


def reasoning_kept(history: list[Any]) -> int:
    """How many reasoning items the history holds (sent back on the Responses API)."""
    from codebot_mcp.core.model.stream import REASONING_KEY

    return sum(len(m.get(REASONING_KEY) or ()) for m in history if isinstance(m, dict))


def _usage_cells(usage: Any) -> str:
    if usage is None or not usage.known:
        return "unknown (the server reported no usage)"
    share = usage.cached_share
    cached = f"{usage.cached_tokens:,} cached ({share:.0%})" if share is not None else "0 cached"
    text = f"{usage.prompt_tokens:,} prompt ({cached}), {usage.completion_tokens:,} completion"
    if usage.reasoning_tokens:
        text += f" ({usage.reasoning_tokens:,} reasoning)"
    return text


def usage_report(runtime: ChatRuntime) -> str:
    """``/usage``: the last turn and the session."""
    agent = runtime.agent
    if agent is None:
        return "(no model configured)"
    last = agent.last.last_usage if agent.last else None
    lines = [f"last turn: {_usage_cells(last)}", f"session:   {_usage_cells(agent.usage)}"]
    if agent.budget.summary_requests:
        lines.append(f"summaries: {agent.budget.summary_requests} request(s)")
    return "\n".join(lines)


def usage_line(agent: Any, result: Any) -> str:
    """The line after an answer once the session passed ``usage_line_after`` tokens."""
    return (
        f"(tokens this answer: {_usage_cells(result.usage)}; session total {agent.usage.total:,})"
    )


HELP = """\
/mcp          servers: connected, failed (with the reason), tool counts
/mcp reload   re-read settings.json (servers, permissions, trust, model); reconnect changed servers
/mcp login NAME  log in to an http server with OAuth (opens the browser), then reconnect it
/tools        the tools: loaded (in the request) and deferred (behind search_tools)
/mcp__SERVER__PROMPT key=value…   run a server's prompt; its messages go into the conversation
@SERVER:URI   in a prompt: insert that resource (Tab completes servers, URIs and prompts)
/plan         toggle plan mode (read-only tools)
/sandbox      the sandbox bash runs in: mode, network, writable paths, what the kernel supports
/context      what fills the context window, largest first
/compact [focus]  summarise the conversation now (optionally: what to keep)
/usage        tokens: prompt, cached, completion, reasoning; last turn and this session
/hooks        the hooks: each event's commands, and the file each comes from
/agents       the agents task can start, and this session's subagent runs
/resume [ID]  continue a saved session of this project (a list without ID)
/skills [NAME]  the skills the model may load, with their origin; NAME: show one
/memory       the project notes loaded (AGENTS.md, CODEBOT.md...), with their sizes
/init         write a first AGENTS.md for this project (asks before overwriting)
/rewind [N]   the turns and the files each changed; with N, restore the files (and if you
              like the conversation) to before turn N
/model [NAME]  the endpoint's models (no NAME); with NAME, use it for this session
/expand       the last tool result in full (also Ctrl-O at the prompt)
/todos        the plan the model keeps with todo_write (☐ pending, ◐ in progress, ☑ done)
/jobs [kill ID]  the background jobs bash started (run_in_background); kill ID ends one
/export [FILE]  write this conversation as Markdown (default ./codebot-<session>.md)
/clear        forget the conversation
/help         this list
/exit         leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)
Alt+Enter inserts a new line; Ctrl-C cancels a running turn; Ctrl-O shows the last tool
result whole. Questions (approvals, trust, rewind) take one key, no Enter; Esc is no."""
