"""Model endpoint discovery and `codebot models`, against the loopback model server."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.cli.chat_runtime import ChatOptions
from codebot_mcp.cli.commands.models import offer_local
from codebot_mcp.cli.runtime import Globals
from codebot_mcp.core.model import localservers as discovery
from tests.fakes.openai_server import FakeOpenAI


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def silent() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def port_of(fake: FakeOpenAI) -> int:
    return int(fake.base_url.rsplit(":", 1)[1].split("/")[0])


@pytest.fixture
def candidates(
    fake: FakeOpenAI, silent: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[discovery.Candidate, ...]:
    found = (
        discovery.Candidate("Ollama", free_port()),  # nothing listens
        discovery.Candidate("llama.cpp", silent),  # open, silent
        discovery.Candidate("LM Studio", port_of(fake)),
    )
    monkeypatch.setattr(discovery, "CANDIDATES", found)
    return found


@pytest.fixture
def roomy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe budget a loaded test machine always meets: the tests that use it are about
    what codebot does with what it found, not about the 0.3 s budget (tested above)."""
    monkeypatch.setattr(discovery, "BUDGET_SECONDS", 2.0)


def test_probe_finds_the_server_that_answers_within_its_budget(
    candidates: tuple[discovery.Candidate, ...], fake: FakeOpenAI
) -> None:
    start = time.monotonic()
    found = discovery.probe(candidates)
    assert (
        time.monotonic() - start < 5
    )  # a hang guard, not a benchmark: the silent port is abandoned
    assert found == [discovery.Found("LM Studio", fake.base_url, ("fake-model",))]


def test_default_candidates_are_the_four_known_servers() -> None:
    assert [(c.name, c.port) for c in discovery.CANDIDATES] == [
        ("Ollama", 11434),
        ("llama.cpp", 8080),
        ("LM Studio", 1234),
        ("vLLM", 8000),
    ]
    assert discovery.CANDIDATES[0].base_url == "http://127.0.0.1:11434/v1"


def test_models_lists_the_configured_endpoint(
    fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "--base-url", fake.base_url, "models")
    assert (code, out) == (0, "fake-model\n"), err
    code, out, _ = codebot(capsys, "models", "--json", "--base-url", fake.base_url)
    assert json.loads(out) == {"base_url": fake.base_url, "models": ["fake-model"]}


class _Rejects(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401, "Unauthorized")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_models_errors_exit_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Rejects)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-1234")
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        code, out, err = codebot(capsys, "models", "--base-url", base)
    finally:
        server.shutdown()
        server.server_close()
    assert code == 5 and "answered 401 Unauthorized" in err and "Check the API key" in err
    assert "sk-wrong-key-1234" not in out + err
    code, _, err = codebot(capsys, "models", "--base-url", f"http://127.0.0.1:{free_port()}/v1")
    assert code == 5 and "cannot reach the model server" in err


def test_models_without_endpoint_lists_what_it_finds(
    roomy: None,
    candidates: tuple[discovery.Candidate, ...],
    fake: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "models")
    assert code == 0, err
    assert f"LM Studio at {fake.base_url}: fake-model" in out


def test_one_shot_chat_without_endpoint_names_what_it_found(
    roomy: None,
    candidates: tuple[discovery.Candidate, ...],
    fake: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "chat", "-p", "hi")
    assert code == 5
    assert f"1. LM Studio at {fake.base_url}: fake-model" in err
    assert f"codebot chat --base-url {fake.base_url} --model fake-model" in err
    assert fake.bodies == []  # nothing was sent without asking


def test_interactive_offer_picks_the_endpoint_and_model(
    roomy: None,
    candidates: tuple[discovery.Candidate, ...],
    fake: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("builtins.input", lambda _: "y")
    options = ChatOptions()
    offer_local(Globals(cwd=tmp_path), options, interactive=True)
    assert (options.base_url, options.model) == (fake.base_url, "fake-model")
    assert "Using LM Studio" in capsys.readouterr().err
    monkeypatch.setattr("builtins.input", lambda _: "n")
    declined = ChatOptions()
    offer_local(Globals(cwd=tmp_path), declined, interactive=True)
    assert declined.base_url is None


def test_no_probe_when_an_endpoint_is_configured(
    candidates: tuple[discovery.Candidate, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(discovery, "probe", lambda *a, **k: pytest.fail("probed"))
    options = ChatOptions()
    offer_local(Globals(cwd=tmp_path), options, interactive=True)
    assert options.base_url is None


class _Recorder(BaseHTTPRequestHandler):
    """Answers GET with a model list (or a redirect, per ``routes``); records each request."""

    seen: list[tuple[str, str | None]]
    routes: dict[str, str]

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization")))
        target = self.routes.get(self.path)
        if target is not None:
            self.send_response(302, "Found")
            self.send_header("Location", target)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = json.dumps({"data": [{"id": "m-" + self.path.strip("/").replace("/", "-")}]})
        self.send_response(200, "OK")
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def recorders() -> Iterator[list[tuple[ThreadingHTTPServer, type[_Recorder]]]]:
    made = []
    for _ in range(2):
        handler = type("Bound", (_Recorder,), {"seen": [], "routes": {}})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        made.append((server, handler))
    yield made
    for server, _ in made:
        server.shutdown()
        server.server_close()


def test_models_never_sends_the_key_to_another_origin_on_a_redirect(
    recorders: list[tuple[ThreadingHTTPServer, type[_Recorder]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-redirect-canary-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    (origin, first), (elsewhere, second) = recorders
    base = f"http://127.0.0.1:{origin.server_address[1]}"
    other = f"http://127.0.0.1:{elsewhere.server_address[1]}"
    first.routes["/v1/models"] = f"{other}/v2/models"
    code, out, err = codebot(capsys, "models", "--base-url", f"{base}/v1")
    assert (code, out) == (0, "m-v2-models\n"), err
    assert first.seen == [("/v1/models", f"Bearer {key}")]
    assert second.seen == [("/v2/models", None)]  # another origin: no key

    first.seen.clear()  # a redirect within the origin keeps it (a trailing-slash fix-up)
    first.routes["/v1/models"] = f"{base}/v1/models/"
    code, out, err = codebot(capsys, "models", "--base-url", f"{base}/v1")
    assert (code, out) == (0, "m-v1-models\n"), err
    assert first.seen == [("/v1/models", f"Bearer {key}"), ("/v1/models/", f"Bearer {key}")]
