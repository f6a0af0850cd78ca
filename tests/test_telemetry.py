"""OpenTelemetry export (setting ``telemetry``, ``core.telemetry``), against real processes.

Each run is the real ``codebot chat -p`` in its own process (telemetry is process-wide: the
global tracer provider is set once, and the flush at exit is part of what is tested), with
the fake OpenAI server (``tests.fakes.openai_server``), the MCP server ``tests.servers.traced``
that records the ``params._meta`` of every request, and a real OTLP receiver on loopback that
decodes what it gets with the official protobuf definitions (``tests.fakes.otlp_receiver``).
The runs that tests only read are shared per module. The rules of the ``OTEL_*`` variables
and of the setting are unit tests of :func:`core.telemetry.exportconfig.resolve`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.telemetry.exportconfig import resolve
from codebot_mcp.core.telemetry.exportsettings import TelemetrySettings, parse_telemetry
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.otlp_receiver import GrpcReceiver, OtlpReceiver, SpanRecord
from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT
from tests.test_imports import PROBE

KEY = "sk-telemetry-secret-0123456789abcdef"
PROMPT = "find PROMPT-7f3a in the notes"
ARGUMENT = "ARG-91c2"
ANSWER = "ANSWER-5d0e is the answer"
MARKERS = ("PROMPT-7f3a", ARGUMENT, ANSWER)


@dataclass
class Run:
    """One finished ``chat -p`` process and what everything around it saw."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    modules: set[str]
    received: OtlpReceiver | GrpcReceiver | None
    fake: FakeOpenAI
    meta: list[dict[str, Any]]

    def one(self, name: str) -> SpanRecord:
        assert self.received is not None
        found = [s for s in self.received.spans if s.name == name]
        assert len(found) == 1, (name, [s.name for s in self.received.spans])
        return found[0]


def environment(home: Path, **extra: str) -> dict[str, str]:
    """The process's environment: nothing of the developer's (keys, OTEL_*, proxies)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CODEBOT_", "OTEL_")) and not k.lower().endswith("_proxy")
    }
    return {
        **env,
        "NO_PROXY": "127.0.0.1,localhost",
        "CODEBOT_HOME": str(home),
        "CODEBOT_TRUST_PROJECT": "1",
        "CODEBOT_MANAGED_SETTINGS": str(home / "no-managed-settings.json"),
        "OPENAI_API_KEY": KEY,
        **extra,
    }


def chat(
    tmp: Path,
    turns: list[Any],
    *,
    telemetry: dict[str, Any] | None,
    receiver: OtlpReceiver | GrpcReceiver | None = None,
    servers: bool = True,
    prompt: str = PROMPT,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """``codebot chat -p`` in a fresh project under ``tmp``; sys.modules at its end kept."""
    tmp.mkdir(parents=True, exist_ok=True)
    record = tmp / "meta.jsonl"
    record.touch()
    with FakeOpenAI(turns) as fake:
        data: dict[str, Any] = {"base_url": fake.base_url, **(settings or {})}
        if servers:
            data["mcp_servers"] = {"traced": server_entry("traced", str(record))}
        if telemetry is not None:
            data["telemetry"] = telemetry
        write_settings(tmp, data)
        began = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, "--cwd", str(tmp), "chat", "-p", prompt, "--yes"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO_ROOT,
            env=environment(tmp / "home", **(env or {})),
            stdin=subprocess.DEVNULL,
        )
        seconds = time.monotonic() - began
    stderr, _, modules = proc.stderr.rpartition("MODULES=")
    meta = [json.loads(line) for line in record.read_text().splitlines()]
    return Run(
        proc.returncode,
        proc.stdout,
        stderr,
        seconds,
        set(json.loads(modules)) if modules else set(),
        receiver,
        fake,
        meta,
    )


def calls() -> list[Any]:
    """A turn that calls the traced server's tool, one the rules deny and an unknown one."""
    return [
        fo.tool_calls(
            ("mcp__traced__probe", {"text": ARGUMENT}),
            ("mcp__traced__broken", {}),
            ("mcp__traced__nosuch", {}),
        ),
        fo.text(ANSWER),
    ]


DENY = {"permissions": {"deny": ["mcp__traced__broken"]}}


@pytest.fixture(scope="module")
def quiet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Telemetry on, ``log_content`` off (the default), with a header from a variable."""
    with OtlpReceiver() as receiver:
        yield chat(
            tmp_path_factory.mktemp("quiet"),
            calls(),
            telemetry={
                "enabled": True,
                "endpoint": receiver.endpoint,
                "headers": {"x-collector-key": "${COLLECTOR_KEY}"},
            },
            receiver=receiver,
            settings=DENY,
            env={"COLLECTOR_KEY": "collector-0123456789"},
        )


@pytest.fixture(scope="module")
def spans(quiet: Run) -> dict[str, SpanRecord]:
    assert quiet.code == 0, quiet.stderr
    assert quiet.received is not None
    return {s.span_id: s for s in quiet.received.spans}


class TestOneTracedRun:
    """The checks that only read the one traced chat run of :func:`quiet`: under xdist a test
    class is one unit of work (``tests/conftest.py``), so the run is made once, by the one
    worker that gets them, not once per worker."""

    # -- traces ---------------------------------------------------------------------------

    def test_spans_are_one_trace_session_run_model_tool_mcp(
        self, quiet: Run, spans: dict[str, SpanRecord]
    ) -> None:
        session = quiet.one("session codebot")
        run = quiet.one("invoke_agent codebot")
        tool = quiet.one("execute_tool mcp__traced__probe")
        mcp_call = quiet.one("tools/call probe")
        models = [s for s in spans.values() if s.name == "chat fake-model"]
        assert len(models) == 2
        assert {s.trace_id for s in spans.values()} == {session.trace_id}
        assert session.parent_id == ""
        assert run.parent_id == session.span_id
        assert all(m.parent_id == run.span_id for m in models)
        assert tool.parent_id == run.span_id
        assert mcp_call.parent_id == tool.span_id  # the MCP SDK's span, under the tool call
        handshake = [
            s for s in spans.values() if s.attributes.get("mcp.method.name") == "tools/list"
        ]
        assert handshake and all(s.parent_id == session.span_id for s in handshake)
        assert session.resource["service.name"] == "codebot"
        assert session.attributes["gen_ai.conversation.id"]

    def test_model_spans_carry_the_genai_attributes(
        self, quiet: Run, spans: dict[str, SpanRecord]
    ) -> None:
        models = sorted(
            (s for s in spans.values() if s.name == "chat fake-model"),
            key=lambda s: s.attributes["codebot.turn"],
        )
        for span, finish in zip(models, (["tool_calls"], ["stop"]), strict=True):
            a = span.attributes
            assert span.kind == "CLIENT"
            assert a["gen_ai.operation.name"] == "chat"
            assert a["gen_ai.provider.name"] == "openai"
            assert a["gen_ai.request.model"] == "fake-model"
            assert a["gen_ai.response.model"] == "fake-model"
            assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
            assert a["gen_ai.response.finish_reasons"] == finish
            assert a["server.address"] == "127.0.0.1"
        run = quiet.one("invoke_agent codebot").attributes
        assert run["gen_ai.operation.name"] == "invoke_agent"
        assert run["codebot.run.outcome"] == "answer"
        assert run["gen_ai.usage.input_tokens"] == sum(
            m.attributes["gen_ai.usage.input_tokens"] for m in models
        )

    def test_tool_and_mcp_spans_carry_their_attributes(self, quiet: Run) -> None:
        tool = quiet.one("execute_tool mcp__traced__probe")
        assert tool.kind == "INTERNAL"
        assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
        assert tool.attributes["gen_ai.tool.name"] == "mcp__traced__probe"
        assert tool.attributes["gen_ai.tool.call.id"] == "call_1"
        assert tool.attributes["gen_ai.tool.type"] == "extension"
        assert tool.attributes["codebot.tool.outcome"] == "ok"
        mcp_call = quiet.one("tools/call probe")
        a = mcp_call.attributes
        assert mcp_call.kind == "CLIENT" and mcp_call.scope == "mcp-python-sdk"
        assert a["mcp.method.name"] == "tools/call"
        assert a["gen_ai.tool.name"] == "probe"
        assert a["gen_ai.operation.name"] == "execute_tool"
        assert a["codebot.mcp.server.name"] == "traced"
        assert a["network.transport"] == "pipe"
        assert a["mcp.protocol.version"]
        assert a["jsonrpc.request.id"]
        run = quiet.one("invoke_agent codebot")
        events = dict(run.events)
        assert events["codebot.tool.denied"]["gen_ai.tool.name"] == "mcp__traced__broken"
        assert events["codebot.tool.rejected"]["gen_ai.tool.name"] == "mcp__traced__nosuch"

    def test_the_mcp_request_meta_carries_the_exported_trace(self, quiet: Run) -> None:
        call = [m for m in quiet.meta if m["method"] == "tools/call"]
        assert len(call) == 1 and call[0]["tool"] == "probe"
        version, trace_id, span_id, _flags = call[0]["meta"]["traceparent"].split("-")
        assert version == "00"
        mcp_call = quiet.one("tools/call probe")
        assert (trace_id, span_id) == (mcp_call.trace_id, mcp_call.span_id)
        listed = [m for m in quiet.meta if m["method"] == "tools/list"]
        assert listed and all(
            m["meta"]["traceparent"].split("-")[1] == trace_id for m in listed
        )  # the handshake's requests too

    def test_the_model_request_headers_carry_the_model_span(
        self, quiet: Run, spans: dict[str, SpanRecord]
    ) -> None:
        headers = [r.headers for r in quiet.fake.requests]
        assert len(headers) == 2
        for got in headers:
            parent = {k.lower(): v for k, v in got.items()}["traceparent"]
            _, trace_id, span_id, _ = parent.split("-")
            assert spans[span_id].name == "chat fake-model"
            assert spans[span_id].trace_id == trace_id

    def test_export_headers_come_from_the_setting_with_variables(self, quiet: Run) -> None:
        assert quiet.received is not None
        assert quiet.received.headers
        assert all(
            h.get("x-collector-key") == "collector-0123456789" for h in quiet.received.headers
        )

    def test_no_content_is_exported_without_log_content(self, quiet: Run) -> None:
        assert quiet.received is not None
        raw = quiet.received.raw
        assert b"chat fake-model" in raw  # the export is there...
        for marker in MARKERS:  # ...and no prompt, argument, result or answer in it
            assert marker.encode() not in raw
        assert KEY.encode() not in raw
        for span in quiet.received.spans:
            assert not any(k.startswith(("gen_ai.input", "gen_ai.output")) for k in span.attributes)
            assert "gen_ai.tool.call.arguments" not in span.attributes

    # -- metrics --------------------------------------------------------------------------

    def test_metrics_count_tokens_tools_decisions_and_durations(self, quiet: Run) -> None:
        assert quiet.received is not None
        points = quiet.received.points

        def total(metric: str, **want: Any) -> float:
            return sum(
                p.value
                for p in points
                if p.metric == metric and all(p.attributes.get(k) == v for k, v in want.items())
            )

        def count(metric: str, **want: Any) -> int:
            return sum(
                p.count
                for p in points
                if p.metric == metric and all(p.attributes.get(k) == v for k, v in want.items())
            )

        usage = "gen_ai.client.token.usage"
        models = [s for s in quiet.received.spans if s.name == "chat fake-model"]
        inputs = sum(s.attributes["gen_ai.usage.input_tokens"] for s in models)
        assert total(
            usage, **{"gen_ai.token.type": "input", "gen_ai.request.model": "fake-model"}
        ) == (inputs)
        assert total(usage, **{"gen_ai.token.type": "output"}) > 0
        tools = "codebot.tool.calls"
        assert total(tools, **{"gen_ai.tool.name": "mcp__traced__probe"}) == 1
        assert total(tools, **{"codebot.tool.outcome": "ok"}) == 1
        assert total(tools, **{"codebot.tool.outcome": "denied"}) == 1
        assert total(tools, **{"codebot.tool.outcome": "rejected"}) == 1
        decisions = "codebot.tool.decisions"
        assert total(decisions, **{"codebot.decision": "approved"}) == 1
        assert (
            total(decisions, **{"codebot.decision": "denied", "codebot.decision.by": "rule"}) == 1
        )
        duration = "gen_ai.client.operation.duration"
        assert count(duration, **{"gen_ai.operation.name": "chat"}) == 2
        assert count(duration, **{"gen_ai.operation.name": "execute_tool"}) == 1
        assert count("mcp.client.operation.duration", **{"mcp.method.name": "tools/call"}) == 1


# -- content on, secrets never ------------------------------------------------------------


def test_log_content_exports_prompt_arguments_results_answer_but_no_secret(
    tmp_path: Path,
) -> None:
    turns = [fo.tool_calls(("mcp__traced__probe", {"text": f"{ARGUMENT} {KEY}"})), fo.text(ANSWER)]
    with OtlpReceiver() as receiver:
        run = chat(
            tmp_path,
            turns,
            telemetry={"enabled": True, "endpoint": receiver.endpoint, "log_content": True},
            receiver=receiver,
        )
    assert run.code == 0, run.stderr
    raw = receiver.raw
    assert KEY.encode() not in raw  # the API key the model echoed: masked
    agent = run.one("invoke_agent codebot").attributes
    assert "PROMPT-7f3a" in json.loads(agent["gen_ai.input.messages"])[0]["parts"][0]["content"]
    assert ANSWER in agent["gen_ai.output.messages"]
    tool = run.one("execute_tool mcp__traced__probe").attributes
    assert ARGUMENT in tool["gen_ai.tool.call.arguments"]
    assert "***" in tool["gen_ai.tool.call.arguments"]
    assert f"probed: {ARGUMENT}" in tool["gen_ai.tool.call.result"]
    first = [s for s in receiver.spans if s.name == "chat fake-model"]
    assert any("tool_call" in s.attributes.get("gen_ai.output.messages", "") for s in first)


# -- off, unreachable, gRPC ---------------------------------------------------------------


SECTION = {"codebot_mcp.core.telemetry", "codebot_mcp.core.telemetry.exportsettings"}
"""The feature's settings section (read by settings loading on every run) and its package,
which import nothing of OpenTelemetry."""


def test_off_a_chat_imports_nothing_of_opentelemetry(tmp_path: Path) -> None:
    bare = chat(tmp_path, [fo.text("fine")], telemetry=None, servers=False)
    assert bare.code == 0, bare.stderr
    assert sorted(m for m in bare.modules if m.startswith("opentelemetry")) == []
    ours = {m for m in bare.modules if m.startswith("codebot_mcp.core.telemetry")}
    assert ours <= SECTION  # the settings section only: nothing that exports


@pytest.mark.timeout(180)  # two or three processes: slow on a loaded 2-core machine
def test_off_with_mcp_only_the_sdk_own_imports_and_no_trace_context(tmp_path: Path) -> None:
    run = chat(tmp_path, calls(), telemetry={"enabled": False}, settings=DENY)
    assert run.code == 0, run.stderr
    ours = {m for m in run.modules if m.startswith("codebot_mcp.core.telemetry.")}
    assert ours <= {
        *SECTION,
        "codebot_mcp.core.telemetry.exportconfig",
        "codebot_mcp.core.telemetry.scope",
    }
    # The MCP SDK imports opentelemetry's API itself (mcp.shared._otel); codebot adds nothing.
    sdk_own = mcp_sdk_otel_modules()
    assert {m for m in run.modules if m.startswith("opentelemetry")} <= sdk_own
    assert not any(
        m.startswith(("opentelemetry.sdk", "opentelemetry.exporter")) for m in run.modules
    )
    assert run.meta and all("traceparent" not in m["meta"] for m in run.meta)
    assert all("traceparent" not in {k.lower() for k in r.headers} for r in run.fake.requests)


def mcp_sdk_otel_modules() -> set[str]:
    """The opentelemetry modules ``import mcp`` loads on its own."""
    code = "import json, sys, mcp; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {m for m in json.loads(out.stdout) if m.startswith("opentelemetry")}


@pytest.mark.parametrize("argv", [["--help"], ["chat", "--help"]])
def test_help_imports_nothing_of_opentelemetry(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60
    )
    modules = set(json.loads(proc.stderr.rsplit("MODULES=", 1)[1]))
    assert proc.returncode == 0
    assert sorted(m for m in modules if "opentelemetry" in m or ".telemetry" in m) == []


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_an_unreachable_collector_costs_one_warning_not_the_run(
    tmp_path: Path, protocol: str
) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    run = chat(
        tmp_path,
        [fo.text("fine")],
        telemetry={"enabled": True, "endpoint": endpoint, "protocol": protocol},
        servers=False,
    )
    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "fine"
    warnings = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1, run.stderr  # not the exporters' own logs, not a traceback
    assert warnings[0].startswith("warning: telemetry: could not export to http://127.0.0.1:")
    assert "Traceback" not in run.stderr
    assert run.seconds < 30  # bounded: the flush waits ~2 s, never the exporters' retries


def test_grpc_exports_the_same_spans(tmp_path: Path) -> None:
    with GrpcReceiver() as receiver:
        run = chat(
            tmp_path,
            [fo.text("fine")],
            telemetry={"enabled": True, "endpoint": receiver.endpoint, "protocol": "grpc"},
            receiver=receiver,
            servers=False,
        )
    assert run.code == 0, run.stderr
    assert run.one("invoke_agent codebot").parent_id == run.one("session codebot").span_id
    assert run.one("chat fake-model").attributes["gen_ai.usage.output_tokens"] > 0
    assert any(p.metric == "gen_ai.client.token.usage" for p in receiver.points)


def test_otel_sdk_disabled_wins_over_the_setting(tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        run = chat(
            tmp_path,
            [fo.text("fine")],
            telemetry={"enabled": True, "endpoint": receiver.endpoint},
            receiver=receiver,
            servers=False,
            env={"OTEL_SDK_DISABLED": "true"},
        )
    assert run.code == 0, run.stderr
    assert receiver.spans == [] and receiver.points == []
    assert not any(m.startswith("opentelemetry") for m in run.modules)


# -- the setting and the variables (in process) -------------------------------------------

ON = TelemetrySettings(enabled=True)


def test_off_unless_the_setting_enables_it() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    assert resolve(TelemetrySettings(), env) is None
    assert resolve(ON, {**env, "OTEL_SDK_DISABLED": "true"}) is None
    export = resolve(ON, env)
    assert export is not None
    assert export.traces == "http://collector:4318/v1/traces"
    assert export.metrics == "http://collector:4318/v1/metrics"


def test_defaults_and_per_signal_variables() -> None:
    export = resolve(ON, {})
    assert export is not None
    assert (export.protocol, export.traces) == ("http/protobuf", "http://localhost:4318/v1/traces")
    assert export.service_name == "codebot" and export.log_content is False
    env = {
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:4317",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_SERVICE_NAME": "ci-agent",
        "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b,x-team=core",
    }
    export = resolve(ON, env)
    assert export is not None
    assert export.protocol == "grpc"
    assert export.traces == "http://traces:4317" and export.metrics is None
    assert export.service_name == "ci-agent"
    assert export.headers == {"api-key": "a b", "x-team": "core"}


def test_the_setting_wins_over_the_variables() -> None:
    settings = TelemetrySettings(
        enabled=True,
        endpoint="http://mine:4318/",
        protocol="http/protobuf",
        headers={"x-team": "${TEAM}"},
        service_name="mine",
        metrics=False,
        log_content=True,
    )
    env = {
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://theirs:4317",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://theirs:4317",
        "OTEL_SERVICE_NAME": "theirs",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-team=theirs",
        "TEAM": "ours",
    }
    export = resolve(settings, env)
    assert export is not None
    assert export.traces == "http://mine:4318/v1/traces" and export.metrics is None
    assert export.service_name == "mine" and export.headers == {"x-team": "ours"}
    assert export.log_content is True
    assert resolve(TelemetrySettings(enabled=True, traces=False, metrics=False), {}) is None


def test_a_protocol_codebot_cannot_speak_is_a_clear_error() -> None:
    with pytest.raises(SettingsError, match="OTEL_EXPORTER_OTLP_PROTOCOL is 'http/json'"):
        resolve(ON, {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})
    with pytest.raises(SettingsError, match=r"telemetry\.headers\.x names an unset variable"):
        resolve(TelemetrySettings(enabled=True, headers={"x": "${NOPE_UNSET}"}), {})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "'telemetry' in s.json must be an object"),
        ({"enabled": "yes"}, "'telemetry.enabled' in s.json must be true or false"),
        ({"protocol": "http/json"}, "'telemetry.protocol' in s.json must be"),
        ({"endpoint": ""}, "'telemetry.endpoint' in s.json must be a non-empty string"),
        ({"headers": {"a": 1}}, "'telemetry.headers' in s.json must be an object of strings"),
    ],
)
def test_bad_settings_name_the_key(value: Any, message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace(".", r"\.")):
        parse_telemetry(Path("s.json"), "telemetry", value)


@pytest.mark.timeout(180)  # two or three processes: slow on a loaded 2-core machine
def test_a_subagent_run_is_a_span_under_its_task_call(tmp_path: Path) -> None:
    turns = [
        fo.tool_calls(("task", {"description": "look", "prompt": "probe it"})),
        fo.tool_calls(("mcp__traced__probe", {"text": ARGUMENT})),  # the subagent's turns
        fo.text("the subagent's answer"),
        fo.text(ANSWER),
    ]
    with OtlpReceiver() as receiver:
        run = chat(
            tmp_path,
            turns,
            telemetry={"enabled": True, "endpoint": receiver.endpoint},
            receiver=receiver,
        )
    assert run.code == 0, run.stderr
    task = run.one("execute_tool task")
    runs = receiver.named("invoke_agent codebot")
    assert len(runs) == 2
    inner = next(r for r in runs if r.parent_id == task.span_id)
    assert task.parent_id == next(r for r in runs if r is not inner).span_id
    probe = run.one("execute_tool mcp__traced__probe")
    assert probe.parent_id == inner.span_id
    assert run.one("tools/call probe").parent_id == probe.span_id
    inner_models = [
        s for s in receiver.spans if s.name.startswith("chat ") and s.parent_id == inner.span_id
    ]
    assert len(inner_models) == 2


@pytest.mark.timeout(180)  # two or three processes: slow on a loaded 2-core machine
def test_an_sdk_server_over_stdio_and_http_joins_the_trace(tmp_path: Path) -> None:
    """The official SDK's server reads ``_meta`` and runs the tool under codebot's span."""
    from tests.servers.util import run_http_server

    turns = [
        fo.tool_calls(
            ("mcp__local__whose_trace", {}),
            ("mcp__remote__whose_trace", {}),
            ("mcp__older__whose_trace", {}),
        ),
        fo.text(ANSWER),
    ]
    with (
        run_http_server("--http", module="traced_sdk") as url,
        OtlpReceiver() as receiver,
    ):
        servers = {
            "local": server_entry("traced_sdk"),
            "remote": {"type": "http", "url": url},
            "older": {"type": "http", "url": url, "protocol": "legacy"},  # with a session id
        }
        run = chat(
            tmp_path,
            turns,
            telemetry={"enabled": True, "endpoint": receiver.endpoint},
            receiver=receiver,
            servers=False,
            settings={"mcp_servers": servers},
        )
    assert run.code == 0, run.stderr
    answers = {
        m["tool_call_id"]: m["content"]
        for m in run.fake.bodies[1]["messages"]
        if m["role"] == "tool"
    }
    for server, call_id, transport in (
        ("local", "call_1", "pipe"),
        ("remote", "call_2", "tcp"),
        ("older", "call_3", "tcp"),
    ):
        (span,) = [
            s
            for s in receiver.named("tools/call whose_trace")
            if s.attributes["codebot.mcp.server.name"] == server
        ]
        assert span.attributes["network.transport"] == transport
        assert answers[call_id] == f"trace {span.trace_id} parent {span.span_id}"
    remote = next(
        s for s in receiver.named("tools/call") if s.attributes["network.transport"] == "tcp"
    )
    older = next(
        s
        for s in receiver.named("tools/call")
        if s.attributes["codebot.mcp.server.name"] == "older"
    )
    assert older.attributes["mcp.session.id"]
    assert remote.attributes["server.address"] == "127.0.0.1"
    assert remote.attributes["server.port"] == int(url.rsplit(":", 1)[1].split("/")[0])


def test_a_collector_refusing_the_key_is_one_warning_without_a_secret(tmp_path: Path) -> None:
    secret, password = "collector-key-5e2f9a7c1b", "pass-9f8e7d6c5b"
    with OtlpReceiver(refuse=401) as receiver:
        endpoint = receiver.endpoint.replace("http://", f"http://otel:{password}@")
        run = chat(
            tmp_path,
            [fo.text("fine")],
            telemetry={
                "enabled": True,
                "endpoint": endpoint,
                "headers": {"x-collector-key": "${COLLECTOR_KEY}"},
            },
            receiver=receiver,
            servers=False,
            env={"COLLECTOR_KEY": secret},
        )
    assert run.code == 0, run.stderr
    assert receiver.headers and receiver.headers[0]["x-collector-key"] == secret
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "401" in lines[0], run.stderr
    assert secret not in run.stderr and password not in run.stderr, run.stderr


BLOCK_SDK = """
import sys

class NoSdk:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoSdk())
"""


def test_without_the_sdk_installed_one_warning_names_the_extra(tmp_path: Path) -> None:
    blocker = tmp_path / "nosdk"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK_SDK)  # as if the extra were not installed
    run = chat(
        tmp_path / "project",
        [fo.text("fine")],
        telemetry={"enabled": True, "endpoint": "http://127.0.0.1:9"},
        servers=False,
        env={"PYTHONPATH": str(blocker)},
    )
    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "fine"
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert "OpenTelemetry's SDK is not installed" in lines[0]
    assert "pip install 'codebot-mcp[otel]'" in lines[0]


def test_the_responses_api_request_carries_the_trace_too(tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        run = chat(
            tmp_path,
            [fo.text("fine")],
            telemetry={"enabled": True, "endpoint": receiver.endpoint},
            receiver=receiver,
            servers=False,
            settings={"api": "responses"},
        )
    assert run.code == 0, run.stderr
    (request,) = run.fake.requests
    assert request.path.endswith("/responses")
    model = run.one("chat fake-model")
    parent = {k.lower(): v for k, v in request.headers.items()}["traceparent"]
    assert parent.split("-")[1:3] == [model.trace_id, model.span_id]
    assert model.attributes["gen_ai.usage.output_tokens"] > 0


def test_managed_settings_can_turn_it_on_and_lock_it(tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        managed = tmp_path / "managed-settings.json"
        managed.write_text(
            json.dumps(
                {
                    "telemetry": {"enabled": True, "endpoint": receiver.endpoint},
                    "locked": ["telemetry"],
                }
            )
        )
        run = chat(
            tmp_path / "project",
            [fo.text("fine")],
            telemetry={"enabled": False},  # the project's own value: locked out
            receiver=receiver,
            servers=False,
            env={"CODEBOT_MANAGED_SETTINGS": str(managed)},
        )
    assert run.code == 0, run.stderr
    assert run.one("invoke_agent codebot").parent_id == run.one("session codebot").span_id
