"""A server from the registry through its life: installed as a PyPI package run by ``uvx`` (a
real script on PATH that starts codebot's echo server), listed and called, pinned by ``mcp
lock``, and reported by ``mcp doctor`` once the registry publishes a newer version or deprecates
the installed one (``--offline`` asks nothing).

Two tiers. The first test is the installed ``codebot`` as real processes (``registry_env.run``):
install, list, call and lock, each a process of its own that starts the server through ``uvx``
on a PATH of its own, with the secret from its environment, and hands the server's shutdown to
the reaper as the console script does. The doctor tests and the unreadable provenance run the
CLI in the test's own process (:class:`Cli`: ``cli.app.run`` with ``--cwd``, the same PATH and
variables, stdin from /dev/null); the servers they start are real processes all the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.entry_point import project, user
from tests.cli.registry_env import Cli, cli, home, registry, run, runtimes, settings
from tests.servers.registry_server import FIXTURES, RegistryServer

__all__ = ["cli", "home", "project", "registry", "runtimes", "user"]  # fixtures
pytestmark = pytest.mark.timeout(180)  # each test starts the echo server in several codebot runs

ECHO = "io.github.codebot-tests/echo"


def test_an_installed_package_is_listed_called_and_locked(
    registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, _, err = run(
        "mcp",
        "install",
        ECHO,
        "--scope",
        "project",
        "--yes",
        "--set",
        "ECHO_GREETING=howdy",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    env = {"ECHO_TOKEN": "tok"}

    # without the secret exported the server does not start, and says which variable
    code, out, _ = run("mcp", "list", cwd=project, path=runtimes)
    assert code == 4
    assert "variable ${ECHO_TOKEN} in 'env.ECHO_TOKEN' is not set" in out

    code, out, err = run("mcp", "list", cwd=project, path=runtimes, env=env)
    assert code == 0, err
    assert "✓ echo  stdio · connected" in out
    assert (runtimes / "uvx.args").read_text().splitlines() == [
        "codebot-echo==0.1.0",
        "--style",
        "plain",
    ]
    code, out, err = run(
        "mcp", "call", "echo", "env", "name=ECHO_GREETING", cwd=project, path=runtimes, env=env
    )
    assert (code, out) == (0, "howdy\n"), err
    code, out, err = run(
        "mcp", "call", "echo", "env", "name=ECHO_TOKEN", cwd=project, path=runtimes, env=env
    )
    assert (code, out) == (0, "tok\n"), err  # the secret came from the environment

    # the lock pins where it came from beside its tools
    code, out, err = run("mcp", "lock", cwd=project, path=runtimes, env=env)
    assert code == 0, err
    lock = json.loads((project / ".codebot" / "mcp-lock.json").read_text())
    assert lock["servers"]["echo"]["registry"] == {
        "registry": registry.url,
        "name": ECHO,
        "version": "0.1.0",
        "package": {"registryType": "pypi", "identifier": "codebot-echo", "version": "0.1.0"},
    }
    assert "echo" in lock["servers"]["echo"]["tools"]


def test_doctor_reports_a_newer_version_and_the_update_it_names(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    assert cli("mcp", "install", ECHO, "--yes", cwd=project, path=runtimes)[0] == 0
    env = {"ECHO_TOKEN": "tok"}
    assert cli("mcp", "lock", cwd=project, path=runtimes, env=env)[0] == 0

    registry.requests.clear()
    code, out, err = cli("mcp", "doctor", "-f", "json", cwd=project, path=runtimes, env=env)
    assert code == 0, out + err
    assert [f for f in json.loads(out)["findings"] if f["check"].startswith("registry.")] == []
    assert f"/v0.1/servers/{ECHO.replace('/', '%2F')}/versions/latest" in registry.paths()

    registry.publish(registry.document(FIXTURES / "later" / "echo-0.2.0.json"))
    # the secret is not exported: the server cannot start, and is still checked for updates
    code, out, err = cli("mcp", "doctor", cwd=project, path=runtimes)
    assert code == 1, out + err  # for the variable; a newer version is a warning
    assert "variable ${ECHO_TOKEN}" in out
    assert f"server 'echo' runs {ECHO} 0.1.0; 0.2.0 is the latest in {registry.url}" in out
    assert f"codebot mcp install {ECHO}@0.2.0 --name echo --scope global --force" in out

    # --offline asks no registry, and says nothing of versions
    registry.requests.clear()
    code, out, err = cli("mcp", "doctor", "--offline", cwd=project, path=runtimes)
    assert "0.2.0" not in out and registry.requests == []

    # the update the hint names; the lock sees the entry moved
    code, _, err = cli(
        "mcp",
        "install",
        f"{ECHO}@0.2.0",
        "--name",
        "echo",
        "--force",
        "--yes",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    assert settings(home)["mcp_servers"]["echo"]["args"][0] == "codebot-echo==0.2.0"  # type: ignore[index]
    code, out, err = cli("mcp", "doctor", "--offline", cwd=project, path=runtimes, env=env)
    assert (
        f"it was installed from {ECHO} 0.2.0 (codebot-echo), the lock pins {ECHO} 0.1.0 "
        "(codebot-echo)"
    ) in out


def test_doctor_reports_a_deprecated_or_vanished_version(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    assert cli("mcp", "install", ECHO, "--yes", cwd=project, path=runtimes)[0] == 0
    env = {"ECHO_TOKEN": "tok"}
    registry.set_status(ECHO, "deprecated", "Moved to io.github.codebot-tests/echo2")
    code, out, _ = cli("mcp", "doctor", cwd=project, path=runtimes, env=env)
    assert code == 0
    assert (
        f"server 'echo': {ECHO} 0.1.0 is deprecated in {registry.url}: Moved to "
        "io.github.codebot-tests/echo2"
    ) in out
    registry.set_status(ECHO, "deleted")
    code, out, _ = cli("mcp", "doctor", cwd=project, path=runtimes, env=env)
    assert f"was installed from {ECHO} 0.1.0, which {registry.url} no longer lists" in out


def test_a_registry_that_cannot_be_reached_is_a_note(
    cli: Cli, home: Path, project: Path, runtimes: Path
) -> None:
    with RegistryServer() as registry:
        (home / "settings.json").write_text(json.dumps({"registry_url": registry.url}))
        assert cli("mcp", "install", ECHO, "--yes", cwd=project, path=runtimes)[0] == 0
    code, out, err = cli("mcp", "doctor", "-v", cwd=project, path=runtimes, env={"ECHO_TOKEN": "t"})
    assert code == 0, out + err
    assert f"could not ask {registry.url} for newer versions of {ECHO}" in out
    assert "pass --offline to skip the registry" in out


def test_an_unreadable_provenance_is_a_warning_and_the_entry_still_runs(
    cli: Cli, home: Path, project: Path, runtimes: Path, registry: RegistryServer
) -> None:
    from tests.helpers import server_entry

    entry = {**server_entry("echo"), "provenance": {"registry": "ftp://x", "name": "x"}}
    data = {"registry_url": registry.url, "mcp_servers": {"plain": entry}}
    (home / "settings.json").write_text(json.dumps(data))
    code, out, err = cli("mcp", "doctor", cwd=project, path=runtimes)
    assert code == 0, out + err
    assert "registry.provenance" in out
    assert "server 'plain': 'provenance.version' must be a non-empty string: it is ignored" in out
    code, out, err = cli("mcp", "call", "plain", "echo", "text=ok", cwd=project, path=runtimes)
    assert (code, out) == (0, "ok\n"), err
