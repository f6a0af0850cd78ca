"""core/registry in-process: version order, input formats, the bounded GET against a silent
server, the catalog's resumed crawl, the 2025-07 field names, bundles that try to leave their
directory, and local names."""

from __future__ import annotations

import hashlib
import io
import socket
import stat
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.registry import bundle as bundles
from codebot_mcp.core.registry.catalog import Catalog
from codebot_mcp.core.registry.http import RegistryError, get_json
from codebot_mcp.core.registry.inputs import Question, coerce, parse_sets, resolve
from codebot_mcp.core.registry.newversions import is_newer
from codebot_mcp.core.registry.serverinstall import default_name
from codebot_mcp.core.registry.serverjson import Input, parse_server
from tests.servers.registry_server import RegistryServer


@pytest.mark.parametrize(
    ("candidate", "installed", "newer"),
    [
        ("1.2.0", "1.1.9", True),
        ("1.10.0", "1.9.0", True),  # numbers, not text
        ("1.0.0", "1.0.0-beta.2", True),  # a release after its pre-releases
        ("1.0.0-beta.10", "1.0.0-beta.9", True),
        ("1.0.0-beta", "1.0.0", False),
        ("0.9.0", "1.0.0", False),  # the registry's latest is older than what you chose
        ("1.0.0", "1.0.0", False),
        ("2025.10.1", "2025.9.30", True),
        ("weekly-42", "weekly-41", True),  # not semver: the registry's word
    ],
)
def test_is_newer(candidate: str, installed: str, newer: bool) -> None:
    assert is_newer(candidate, installed) is newer


def _input(**fields: object) -> Input:
    return Input(kind="env", name="X", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "text", "result"),
    [
        ({"format": "number"}, " 08080 ", "8080"),
        ({"format": "number"}, "1e3", "1000"),
        ({"format": "number"}, "2.50", "2.50"),
        ({"format": "boolean"}, "Yes", "true"),
        ({"format": "boolean"}, "off", "false"),
        ({"format": "filepath"}, "data", "/work/data"),
        ({"format": "filepath"}, "/abs", "/abs"),
        ({"choices": ("us", "eu")}, "EU", "eu"),
        ({}, "  keep spaces ", "  keep spaces "),
    ],
)
def test_coerce(fields: dict[str, object], text: str, result: str) -> None:
    assert coerce(_input(**fields), text, Path("/work")) == result


@pytest.mark.parametrize(
    ("fields", "text", "problem"),
    [
        ({"format": "number"}, "ten", "expected a number"),
        ({"format": "number"}, "nan", "expected a finite number"),
        ({"format": "boolean"}, "maybe", "expected true or false"),
        ({"choices": ("us", "eu")}, "ap", "expected one of us, eu"),
        ({}, "a\nb", "control character"),
    ],
)
def test_coerce_refuses(fields: dict[str, object], text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        coerce(_input(**fields), text, Path("/work"))


class Scripted:
    """Answers questions from a list (None: the input ended)."""

    def __init__(self, answers: list[str | None]) -> None:
        self.answers = answers
        self.problems: list[str | None] = []

    def ask(self, question: Question, problem: str | None, again: bool) -> str | None:
        self.problems.append(problem)
        return self.answers.pop(0)


def test_resolve_asks_once_per_name_and_reasks_what_is_wrong() -> None:
    port = Question("package[0]", Input("named", "--port", format="number", is_required=True), "p")
    token = Question("header[0]", Input("header", "X-Token", is_secret=True), "h")
    region = Question("url.region", Input("variable", "region", default="us"), "u")
    again = Question("header[1].region", Input("variable", "region", default="us"), "u")
    asker = Scripted(["", "ten", "80", None])
    answers = resolve(
        [port, token, region, again], {}, asker=asker, ask_optional=True, cwd=Path("/")
    )
    assert answers == {
        "package[0]": ["80"],
        "header[0]": ["${X_TOKEN}"],  # a secret is never asked
        "url.region": ["us"],  # the input ended: the default
        "header[1].region": ["us"],  # the same name is not asked twice
    }
    assert asker.problems == [None, "a value is required", "expected a number", None]


def test_parse_sets_takes_a_flag_with_or_without_its_dashes() -> None:
    questions = [Question("package[0]", Input("named", "--port"), "p")]
    assert parse_sets(["--port=1", "port=2"], questions) == {"port": ["1", "2"]}
    with pytest.raises(UsageError, match="expected NAME=VALUE"):
        parse_sets(["port"], questions)


@pytest.fixture
def silent() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    listener.close()


def test_a_registry_that_never_answers_times_out(silent: str) -> None:
    started = time.monotonic()
    with pytest.raises(RegistryError, match="cannot reach"):
        get_json(f"{silent}/v0.1/servers", timeout=0.5)
    assert time.monotonic() - started < 5


def test_a_crawl_cut_short_resumes_from_its_cursor(tmp_path: Path) -> None:
    with RegistryServer(fixtures=False, fillers=25) as registry:
        catalog = Catalog(registry.url)
        catalog.sync(budget=0)  # one page, then out of time
        assert len(catalog.servers) == 10 and not catalog.complete
        assert catalog.cursor == "io.example.filler/tool-09:1.0.0"
        catalog.sync(budget=0)
        assert len(catalog.servers) == 20
        assert registry.requests[-1][1]["cursor"] == "io.example.filler/tool-09:1.0.0"
        catalog.sync()
        assert len(catalog.servers) == 25 and catalog.complete and catalog.since
        assert catalog.cursor is None


def test_the_2025_07_field_names_are_read() -> None:
    old = {
        "name": "io.github.example/weather-mcp",
        "description": "Python MCP server for weather data access",
        "version_detail": {"version": "0.5.0"},
        "packages": [
            {
                "registry_type": "pypi",
                "identifier": "weather-mcp-server",
                "version": "0.5.0",
                "runtime_hint": "uvx",
                "environment_variables": [
                    {"name": "WEATHER_API_KEY", "is_required": True, "is_secret": True}
                ],
            }
        ],
        "remotes": [{"transport_type": "sse", "url": "https://x.example/sse"}],
    }
    server = parse_server(old, "https://r.example")
    assert server is not None
    assert server.version == "0.5.0"
    package = server.packages[0]
    assert (package.registry_type, package.runtime_hint) == ("pypi", "uvx")
    assert package.environment_variables[0].is_secret
    assert server.remotes[0].type == "sse"
    assert server.secrets == ["WEATHER_API_KEY"]


def _zip(members: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info, data in members:
            archive.writestr(info, data)
    return out.getvalue()


def _bundle(tmp_path: Path, data: bytes) -> bundles.Bundle:
    archive = tmp_path / "b.mcpb"
    archive.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()  # unpack checks the bytes it unpacks (issue 29)
    return bundles.Bundle(digest, archive, {"server": {}}, tmp_path / "out" / digest)


def test_a_bundle_cannot_leave_its_directory(tmp_path: Path) -> None:
    manifest = (zipfile.ZipInfo("manifest.json"), b"{}")
    link = zipfile.ZipInfo("server/lib")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    for bad in (
        (zipfile.ZipInfo("../escape.py"), b"x"),
        (zipfile.ZipInfo("/etc/evil"), b"x"),
        (link, b"/etc"),
    ):
        bundle = _bundle(tmp_path, _zip([manifest, bad]))
        with pytest.raises(RegistryError, match="a link or a path outside it"):
            bundles.unpack(bundle)
        assert not bundle.directory.exists()
    assert not (tmp_path / "escape.py").exists()
    assert [p.name for p in (tmp_path / "out").iterdir()] == []  # no half-unpacked directory


def test_a_bundle_unpacks_whole_keeping_executables(tmp_path: Path) -> None:
    tool = zipfile.ZipInfo("server/tool")
    tool.external_attr = 0o755 << 16
    bundle = _bundle(tmp_path, _zip([(zipfile.ZipInfo("manifest.json"), b"{}"), (tool, b"#!")]))
    directory = bundles.unpack(bundle)
    assert directory == bundle.directory
    assert (directory / "server" / "tool").stat().st_mode & 0o111


@pytest.mark.parametrize(
    ("name", "local"),
    [
        ("io.github.example/weather-mcp", "weather-mcp"),
        ("com.example/My.Server", "My-Server"),
        ("io.example/__init__", "init"),
        ("io.example/...", "server"),
    ],
)
def test_default_name(name: str, local: str) -> None:
    assert default_name(name) == local


def test_a_bundle_command_cannot_leave_the_bundle(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, b"")
    bundle.manifest = {"server": {"mcp_config": {"command": "${__dirname}/../../bin/evil"}}}
    with pytest.raises(UsageError, match="leaves its directory"):
        bundles.entry(bundle, {}, tmp_path)
    bundle.manifest = {"server": {"mcp_config": {"command": "server/../../evil"}}}
    with pytest.raises(UsageError, match="leaves its directory"):
        bundles.entry(bundle, {}, tmp_path)
    bundle.manifest = {"server": {"mcp_config": {"command": "server/run", "args": ["a ${X}"]}}}
    entry = bundles.entry(bundle, {}, tmp_path)
    assert entry["command"] == f"{bundle.directory}/server/run"
    assert entry["args"] == ["a $${X}"]  # the manifest's unknown ${X} is written literally


def test_an_answer_cut_short_is_a_registry_error() -> None:
    """A body shorter than its Content-Length (the connection dropped) is reported, not a
    crash."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"servers"')
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with pytest.raises(RegistryError, match="stopped answering after 10 of 100 bytes"):
            get_json(f"http://127.0.0.1:{listener.getsockname()[1]}/v0.1/servers", timeout=5)
    finally:
        thread.join(timeout=5)
        listener.close()
