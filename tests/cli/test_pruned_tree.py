"""The pruned command tree (``cli._typer.pruned``): start-up builds only what argv can run,
and every output stays the whole tree's (help, listings, "No such command" suggestions)."""

from __future__ import annotations

import inspect

import pytest

from codebot_mcp.cli import _typer
from codebot_mcp.cli.app import app, run

ARGVS = [
    [],
    ["--help"],
    ["--version"],
    ["mcp"],
    ["mcp", "--help"],
    ["mcp", "lsit"],
    ["nosuch"],
    ["--debug", "mcp", "--help"],
    ["mcp", "list", "--help"],
    ["mcp", "call", "--help"],
    ["mcp", "warm", "--help"],
    ["mcp", "doctor", "--help"],
    ["mcp", "resources", "--help"],
    ["mcp", "prompts", "--help"],
    ["chat", "--help"],
    ["trust", "--help"],
    ["models", "--help"],
    ["mcp", "list", "--bogus"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a) or "(none)")
def test_pruned_tree_prints_what_the_whole_tree_prints(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs = []
    for prune in (True, False):
        monkeypatch.setattr(_typer, "PRUNE", prune)
        code = run(list(argv))
        out = capsys.readouterr()
        outputs.append((code, out.out, out.err))
    assert outputs[0] == outputs[1]
    assert outputs[0][1] or outputs[0][2]


def _callbacks(node: object) -> list[tuple[str, object]]:
    found = [(i.callback.__name__, i.callback) for i in node.registered_commands]  # type: ignore[attr-defined]
    for group in node.registered_groups:  # type: ignore[attr-defined]
        found.extend(_callbacks(group.typer_instance))
    return found


def test_version_builds_no_command_and_mcp_list_builds_only_itself() -> None:
    """Fails the day the pruning stops applying (then every start-up reads every signature)."""
    assert len(_callbacks(app)) > 20
    stubs = _callbacks(_typer.pruned(app, ["--version"]))
    assert 0 < len(stubs) < len(_callbacks(app))  # the mcp group is not even walked
    assert all(not inspect.signature(cb).parameters for _, cb in stubs)  # type: ignore[arg-type]
    listing = _callbacks(_typer.pruned(app, ["mcp", "list", "--json"]))
    real = [name for name, cb in listing if inspect.signature(cb).parameters]  # type: ignore[arg-type]
    assert "list_command" in real
    assert "call_command" not in real and "chat_command" not in real
