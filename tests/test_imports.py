"""Import discipline: the light paths never load the heavy SDKs (deterministic, not timed)."""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_turns import text
from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT

HEAVY = ("mcp", "mcp_types", "openai", "prompt_toolkit", "rich.markdown", "rich.syntax", "httpx2")

PROBE = """
import json, sys
from codebot_mcp.core import gcpause
gcpause.hold()  # as the console script does (cli.entry)
from codebot_mcp.cli.app import run
code = run(sys.argv[1:])
sys.stdout.flush()
print("\\nMODULES=" + json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def loaded_modules(*argv: str) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    marker = proc.stderr.rsplit("MODULES=", 1)
    assert len(marker) == 2, proc.stderr
    return proc.returncode, set(json.loads(marker[1]))


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["mcp", "--help"], ["chat", "--help"]])
def test_help_and_version_import_no_heavy_module(argv: list[str]) -> None:
    code, modules = loaded_modules(*argv)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY) == []


STARTUP_EXTRA = ("__future__", "gc", "logging", "string", "_string", "atexit")
"""Standard modules start-up may add to what ``import typer`` loads (``logging``: the root
callback's NullHandler); anything else beyond our own light modules is a regression."""
STARTUP_OURS = (
    "codebot_mcp",
    "codebot_mcp.core",
    "codebot_mcp.core.errors",
    "codebot_mcp.core.gcpause",  # the console script's first import: the collector paused
    "codebot_mcp.core.secrets",
    "codebot_mcp.core.secrets.credentials",
    "codebot_mcp.core.secrets.redact",
)


def typer_modules() -> set[str]:
    probe = "import json, sys, typer; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO_ROOT
    )
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["mcp", "--help"]])
def test_start_up_imports_nothing_beyond_typer_and_our_light_modules(argv: list[str]) -> None:
    """The import floor of target 1 (``make bench``): a new top-level import of settings,
    servers, jsonschema, rich, pathspec, the SDKs ... in a command module shows up here."""
    code, modules = loaded_modules(*argv)
    assert code == 0
    extra = modules - typer_modules()
    unexpected = sorted(
        m
        for m in extra
        if not (m == "codebot_mcp.cli" or m.startswith(("codebot_mcp.cli.", "typer._click")))
        and m not in STARTUP_OURS + STARTUP_EXTRA
    )
    assert unexpected == []


@pytest.mark.parametrize(
    "argv",
    [["mcp", "--help"], ["--cwd", ".", "--debug", "mcp", "--help"], ["mcp", "doctor", "--help"]],
)
def test_option_parsing_fast_path_keeps_pydantic_out(argv: list[str]) -> None:
    """Fails the day Typer's internals change and cli/_typer.py silently stops applying."""
    code, modules = loaded_modules(*argv)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] == "pydantic") == []


def test_the_fast_path_adapts_every_text_flag_number_and_text_list_option() -> None:
    import typer

    from codebot_mcp.cli._typer import light_option_parsing
    from codebot_mcp.cli.app import app

    def plain(p: Any) -> bool:
        annotation = p.type_descriptor.annotation
        if getattr(p, "multiple", False) or getattr(p, "nargs", 1) != 1:
            return bool(annotation == list[str])
        return annotation in (str, bool, float)

    command = typer.main.get_command(app)
    expected = 0
    stack = [command]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "commands", {}).values())
        expected += 1  # the help option
        expected += sum(
            1 for p in node.params if getattr(p, "type_descriptor", None) is not None and plain(p)
        )
    assert expected > 10
    # At least every plain text and flag option (more kinds may get a fast path too).
    assert light_option_parsing(command) >= expected  # type: ignore[arg-type]


LAYER_PROBE = """\
def late():
    from mcp.client import Client
    import mcp_types
    from typer import Typer
    from prompt_toolkit import PromptSession
    from codebot_mcp.cli.render import warn
    from codebot_mcp.mcpbridge.connection.manager import Manager
    import openai
    from typer._click import exceptions
    from mcp.client._transport import Transport
    return Client, mcp_types, Typer, PromptSession, warn, Manager, openai, exceptions, Transport
"""


def banned_in(path: str) -> set[int]:
    """Lines of LAYER_PROBE that the linter rejects in a file at ``path`` (ruff TID251)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--output-format",
            "json",
            "--stdin-filename",
            path,
            "-",
        ],
        input=LAYER_PROBE,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {d["location"]["row"] for d in json.loads(proc.stdout) if d["code"] == "TID251"}


# LAYER_PROBE lines: 9 typer's private API, 10 the SDK's private API (ruff's banned-api in
# pyproject.toml: import-linter knows an outside package by its top-level name only).
@pytest.mark.parametrize(
    ("path", "banned"),
    [
        ("core/new_module.py", {9, 10}),
        ("mcpbridge/doctor/checks/new_check.py", {9, 10}),
        ("cli/new_command.py", {9, 10}),
        ("tests/test_new.py", {9, 10}),
    ],
)
def test_ruff_fences_the_private_apis(path: str, banned: set[int]) -> None:
    """Only mcpbridge/_sdk.py and cli/_typer.py use them, line by line (noqa)."""
    assert banned_in(path) == banned


def _contracts() -> tuple[Any, list[Any]]:
    """The real import graph and the contracts of pyproject.toml, as ``make lint`` reads them."""
    import grimp
    from importlinter.application.use_cases import read_user_options
    from importlinter.configuration import configure
    from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
    from importlinter.contracts.forbidden import ForbiddenContract
    from importlinter.contracts.layers import LayersContract

    configure()
    kinds = {
        "layers": LayersContract,
        "forbidden": ForbiddenContract,
        "acyclic_siblings": AcyclicSiblingsContract,
    }
    options = read_user_options(str(REPO_ROOT / "pyproject.toml"))
    session = options.session_options
    graph = grimp.build_graph(
        *session["root_packages"], include_external_packages=True, cache_dir=None
    )
    contracts = [
        kinds[c["type"]](name=c["name"], session_options=session, contract_options=c)
        for c in options.contracts_options
    ]
    return graph, contracts


CIRCLES = "no import circle between the modules of a package"


def _broken(graph: Any, contracts: list[Any]) -> set[str]:
    return {c.name for c in contracts if not c.check(copy.deepcopy(graph), verbose=False).kept}


def test_the_contracts_hold_and_each_one_can_break() -> None:
    """The real graph (every import, in functions and under TYPE_CHECKING too) keeps every
    contract; one import that breaks each is caught by exactly the contract meant for it."""
    graph, contracts = _contracts()
    assert "codebot_mcp.cli.runtime" in graph.find_modules_directly_imported_by(
        "codebot_mcp.cli.repl.repl_loop"
    )  # the graph is real
    assert _broken(graph, contracts) == set()
    breaches = {
        "codebot_mcp.core.config.paths -> codebot_mcp.cli.render": "cli imports mcpbridge",
        "codebot_mcp.core.config.paths -> codebot_mcp.core.agent.loop": "core's stack",
        "codebot_mcp.core.tools.base -> codebot_mcp.core.model.client": "core's stack",
        # the kernel knows no feature (only its protocols), and no feature knows another
        "codebot_mcp.core.agent.loop -> codebot_mcp.core.hooks.points": "core's stack",
        "codebot_mcp.core.agent.session -> codebot_mcp.core.skills.skillcatalog": "core's stack",
        "codebot_mcp.core.hooks.runner -> codebot_mcp.core.checkpoints.turns": "core's stack",
        "codebot_mcp.core.subagents.delegation -> codebot_mcp.core.hooks.points": ("core's stack"),
        # bash knows the jobs only as the kernel's BackgroundJobs; the session gets their tools
        # from the kernel's registry (core/toollist.py names them)
        "codebot_mcp.core.tools.builtin.bash -> codebot_mcp.core.jobs.jobtable": "core's stack",
        "codebot_mcp.core.agent.session -> codebot_mcp.core.jobs.jobtools": "core's stack",
        # the loop's parts come from the kernel's registry (core/looplist.py names them)
        "codebot_mcp.core.agent.loopparts -> codebot_mcp.core.looplist": "core's stack",
        "codebot_mcp.core.hooks.loophooks -> codebot_mcp.core.checkpoints.loopcheckpoints": (
            "core's stack"
        ),
        # settings loading holds a feature's section without naming it (core/sectionlist.py does)
        "codebot_mcp.core.config.settings -> codebot_mcp.core.checkpoints.checkpointing": (
            "core's stack"
        ),
        # nor the hooks', whose commands trust covers through the feature's entry combiner
        "codebot_mcp.core.config.trust -> codebot_mcp.core.hooks.hooksection": "core's stack",
        # nor the sandbox's, which it combines through the feature's combiner
        "codebot_mcp.core.config.managed -> codebot_mcp.core.sandbox.sandboxsettings": (
            "core's stack"
        ),
        "codebot_mcp.mcpbridge.transport.wire -> codebot_mcp.mcpbridge.connection.mcp_client": (
            "mcpbridge's stack"
        ),
        "codebot_mcp.cli.repl.repl_loop -> codebot_mcp.cli.commands.chat": "cli's stack",
        "codebot_mcp.core.config.paths -> typer": "core never imports",
        "codebot_mcp.core.agent.loop -> httpx2": "core never imports",
        "codebot_mcp.mcpbridge.connection.mcp_client -> openai": "mcpbridge never talks",
        "codebot_mcp.cli.render -> mcp": "cli never imports the MCP SDK",
        "codebot_mcp.mcpbridge.auth.flow -> codebot_mcp.core.agent.loop": "the bridge never",
        "codebot_mcp.core.config.paths -> codebot_mcp.core.config.settings": "no import circle",
    }
    for edge, contract in breaches.items():
        importer, imported = edge.split(" -> ")
        changed = copy.deepcopy(graph)
        if imported not in changed.modules:
            changed.add_module(imported, is_squashed=True)
        changed.add_import(importer=importer, imported=imported)
        broken = _broken(changed, contracts)
        meant = {b for b in broken if b.startswith(contract)}
        # an upward import often closes a circle too; nothing else may break
        assert len(meant) == 1 and broken - meant <= {CIRCLES}, (edge, broken)


def test_a_new_sub_package_must_take_its_place_in_the_stack() -> None:
    """``exhaustive``: a sub-package no layer names breaks its stack's contract."""
    graph, contracts = _contracts()
    changed = copy.deepcopy(graph)
    changed.add_module("codebot_mcp.core.newfeature")
    assert {b.partition(":")[0] for b in _broken(changed, contracts)} == {"core's stack"}


def test_chat_without_mcp_servers_never_loads_the_sdk(tmp_path: Path) -> None:
    """The SDK loads with the first server a run starts: ``chat`` alone spends no second on it."""
    with FakeOpenAI([text("hello")]) as fake:
        write_settings(tmp_path, {"base_url": fake.base_url})
        code, modules = loaded_modules("--cwd", str(tmp_path), "chat", "-p", "hi")
    assert code == 0 and len(fake.requests) == 1  # it did answer, through the model
    assert "codebot_mcp.mcpbridge.connection.manager" in modules  # with a (serverless) manager
    assert sorted(m for m in modules if m.split(".")[0] in ("mcp", "mcp_types")) == []


@pytest.mark.parametrize("command", [["mcp", "list"], ["mcp", "call", "echo", "echo", "text=x"]])
def test_mcp_commands_do_not_import_openai(tmp_path: Path, command: list[str]) -> None:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    code, modules = loaded_modules("--cwd", str(tmp_path), *command)
    assert code == 0
    assert "codebot_mcp.mcpbridge.calls.lite" in modules  # it did the work, on the hot path:
    assert "mcp" not in modules and "pydantic" not in modules  # without the SDK's models
    assert not any(m == "openai" or m.startswith("openai.") for m in modules)
    assert not any(m.startswith("prompt_toolkit") for m in modules)
    # of the feature packages, only the settings sections the loader reads (core/sectionlist.py)
    features = {m for m in modules if m.split(".")[2:3] and m.split(".")[2] in FEATURES}
    assert features <= SECTIONS, sorted(features - SECTIONS)


FEATURES = (
    *("checkpoints", "hooks", "jobs", "plugins", "skills", "slashcommands", "subagents"),
    "telemetry",
)
"""``core``'s feature packages (the top of its stack but one, in ``pyproject.toml``)."""
SECTIONS = {
    "codebot_mcp.core.checkpoints",
    "codebot_mcp.core.checkpoints.checkpointing",
    "codebot_mcp.core.hooks",
    "codebot_mcp.core.hooks.hooksection",
    "codebot_mcp.core.telemetry",
    "codebot_mcp.core.telemetry.exportsettings",
}
"""The features' settings sections and their packages: all ``mcp list`` and ``mcp call``
import of the features."""


def test_packages_are_ours() -> None:
    from codebot_mcp import cli, core, mcpbridge

    for package in (cli, core, mcpbridge):
        assert Path(package.__file__ or "").resolve().is_relative_to(REPO_ROOT)


@pytest.mark.parametrize("argv", [["--version"], ["mcp", "--help"]])
def test_nothing_imports_the_bare_folder_names(argv: list[str]) -> None:
    """Another distribution's top-level ``core`` or ``cli`` can never shadow ours (issue 14)."""
    code, modules = loaded_modules(*argv)
    assert code == 0
    assert "codebot_mcp.cli.app" in modules  # the probe ran our code
    assert sorted(m for m in modules if m.split(".")[0] in ("cli", "core", "mcpbridge")) == []


def test_module_sizes_are_explained() -> None:
    """Split by idea, never to fit a number: a size is a smell to explain, not a target.

    A module over 500 lines says why in its docstring (a line starting "Size:"); none passes 700.
    """
    unexplained, too_big = {}, {}
    for package in ("cli", "core", "mcpbridge"):
        for path in (REPO_ROOT / package).rglob("*.py"):
            text = path.read_text()
            lines = len(text.splitlines())
            name = str(path.relative_to(REPO_ROOT))
            doc = ast.get_docstring(ast.parse(text)) or ""
            if lines > 700:
                too_big[name] = lines
            elif lines > 500 and not any(ln.startswith("Size:") for ln in doc.splitlines()):
                unexplained[name] = lines
    assert too_big == {}, "over 700 lines: split where the ideas part"
    assert unexplained == {}, 'over 500 lines without a "Size:" line in the docstring'
