"""Small real MCP servers used by codebot's tests.

Every server runs as ``python -m tests.servers.<name> [options]`` from the repo
root (or with ``PYTHONPATH=<repo root>``); see ``tests/servers/util.py`` for
helpers that build the command line and run the HTTP server.

=================  ====  =====================================================
name               SDK?  behaviour
=================  ====  =====================================================
echo               no    server "echo" with echo/add/fail/annotated/image/link/
                         embedded/binary/big/sleep/env/crash tools
echo_sdk           yes   the same "echo" on ``MCPServer``, the reference the raw
                         one is held to (``tests/test_servers_raw.py``)
asker              no    server "asker": resolver tools that elicit, sample, list
                         roots (input rounds at 2026-07-28, requests mid-call
                         before), progress, logs, ``wait`` (cancellation marker),
                         ``touch`` (resource updates); resources, a template, a
                         prompt with completion
hostile            no    control characters, lying annotations, poisoned
                         descriptions, secrets split across stderr, log and
                         progress; ``--variant``, ``--poison``, ``--escape``
mutating           no    add_tool/remove_tool/ping_tool; emits tools list_changed
                         in both eras (legacy notification, 2026 listen stream)
described          no    tools named and described by ``--tools FILE`` (a JSON list
                         of name/description): doctor's lint on real descriptions
relist_fail        no    ``change(fails)`` adds a tool, emits tools list_changed
                         (both eras), then fails the next ``fails`` tools/list
rugpull            no    ``status()`` rewrites ``notes``' description and emits
                         tools list_changed (both eras)
toucher            no    write_file/connect/tmpdir: what a sandbox must stop
fetcher            no    ``fetch(url)`` with urllib (proxy variables honoured): a
                         sandboxed server's network by domain
pictures           no    images: ``screenshot(width, height)`` and ``two_charts``
                         answer PNG image blocks, ``fake_image`` one that is not
                         an image; resource ``chart://latest`` is a PNG blob
slow_start         no    sleeps ``--delay`` s (default 1.0) before serving one
                         tool ``hello``; ``--barrier DIR --count N``
crash_on_start     no    prints a fatal message to stderr and exits with code 3
hang               no    reads stdin, never answers (``--ignore-eof``,
                         ``--ignore-sigterm`` make it harder to stop)
silent_discover    no    raw JSON-RPC 2025-era server that never answers unknown
                         methods such as ``server/discover``; tool ``hello``
many_tools         no    ``--count N`` tools (default 100), cursor pagination
                         with ``--page-size P`` (default 50), ``--long-names``
http_server        yes   Streamable HTTP on 127.0.0.1 with bearer-token auth,
                         prints ``READY <url>``; ``--html`` / ``--status N`` modes
garbage_stdout     no    writes non-JSON lines to stdout, then serves ``echo``
stderr_flood       no    floods ~20 MB to stderr while serving ``echo``
faulty             no    misbehaves on request: not-UTF-8 answers, huge answers,
                         list_changed storms, dies mid-call, ignores SIGTERM
many_raw           no    ``--count N`` tools with cursor pagination (load tests)
sleepy_raw         no    sleeps ``--delay`` s without CPU, then serves ``echo``;
                         ``--timing-log`` records server-side call times (bench)
lint_target        no    tools that break model-API rules (doctor tests)
tasker             no    the Tasks extension (SEP-2663): task tools, tasks/get,
                         tasks/update, tasks/cancel; ``--poll-ms``, ``--ttl-ms``,
                         ``--rude``, ``--log``; ``--http`` (Streamable HTTP) and
                         ``--sdk`` (stdio, the reference) run on the SDK
skills             no    SEP-2640 skills (skills/list, skills/get, files as
                         resources), both eras; ``--collide``, ``--dynamic``,
                         ``--invalid``, ``--extra N``, ``--tamper MODE``,
                         ``--log FILE`` (each request it lets in)
apps               no    MCP Apps (SEP-1865): ``_meta.ui`` tools, a ``ui://``
                         page, both eras; ``--only-app``, ``--record FILE``
                         (the client's declared capabilities)
=================  ====  =====================================================

``forkserver.py`` starts the HTTP servers of ``util.run_http_server``: one process per test
process imports the MCP SDK once, and each server is a fork of it (a process of its own, as
before, without the ~0.6 s of CPU an SDK import costs each start).

``_raw.py`` is the tiny newline-delimited JSON-RPC loop shared by the older SDK-free
servers (they boot in ~50 ms instead of the ~1-3 s an SDK import costs).
``_era.py`` is the raw two-era base (``initialize`` and 2026-07-28 envelopes) of
those that must answer exactly as an SDK server would (echo, asker, skills, apps, hostile,
mutating, rugpull, toucher, slow_start, many_tools, stderr_flood, tasker: its stdio; its task
logic, shared with its SDK-built ``--http``, is ``_tasker_book.py``); ``_mcpserver.py`` adds
what ``MCPServer`` does around a tool (pydantic's argument checks and messages, resolver
questions and their input rounds, a sealed ``requestState``). ``golden/<server>.json`` holds
the recorded answers of the SDK-built originals of hostile, mutating, rugpull, toucher,
slow_start, many_tools and stderr_flood, which ``tests/test_servers_raw.py`` replays
against the raw ones (asker, skills and apps: ``tests/test_servers_asker.py`` and
``tests/test_servers_extensions.py``; tasker: ``tests/test_servers_tasker.py``).
"""
