"""``codebot mcp install`` against the loopback registry: the entry it shows and writes for
each kind of package and remote, the values it asks for (``--set``, stdin, a real pty, ``--yes``
without a terminal), secrets as ``${VAR}``, MCP bundles checked against their sha256, hostile
entries, and the trust gate for project installs.

Two tiers. What reads stdin runs the installed ``codebot`` as a real process
(``registry_env.run``, ``run_on_pty``): answers piped in (the main scenario, an install asked
for its values and written, start to exit), the end of stdin, a real terminal, ``--yes`` with
no terminal, the choice of a way to run it, and a hostile entry answered by a pipe. The rest
run the CLI in the test's own process (:class:`Cli`: ``cli.app.run`` with ``--cwd``, the same
PATH and variables over the test's environment, stdin from /dev/null, as ``run`` gives its
child): the entries for each kind, ``--set``, secrets, errors and exit codes, bundles, hostile
entries and trust. The servers they call are real processes all the same; what the console
script adds around ``run`` (the reaper hand-off, the sweep of orphaned descendants, the exit)
is proved in tests/e2e and tests/hostile.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.entry_point import project, user
from tests.cli.registry_env import Cli, cli, home, registry, run, run_on_pty, runtimes, settings
from tests.servers.registry_server import RegistryServer

__all__ = ["cli", "home", "project", "registry", "runtimes", "user"]  # fixtures

ECHO = "io.github.codebot-tests/echo"


def shown_entry(out: str) -> dict[str, object]:
    """The entry install printed (the JSON object after "this entry to FILE:")."""
    text = out.split(":\n", 1)[1]
    return json.loads(text[: text.index("\n}\n") + 2])


def test_dry_run_shows_the_entry_and_writes_nothing(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli("mcp", "install", ECHO, "--dry-run", "--yes", cwd=project, path=runtimes)
    assert code == 0, err
    assert out.startswith(
        f"{ECHO} 0.1.0 from {registry.url}, as pypi codebot-echo 0.1.0 (uvx)\n"
        f"codebot would write this entry to {home / 'settings.json'}:\n"
    )
    assert shown_entry(out) == {
        "echo": {
            "command": "uvx",
            "args": ["codebot-echo==0.1.0", "--style", "plain"],
            "env": {"ECHO_GREETING": "hello", "ECHO_TOKEN": "${ECHO_TOKEN}"},
            "description": "Repeats what it is given; codebot's own test server, packaged for PyPI",
            "provenance": {
                "registry": registry.url,
                "name": ECHO,
                "version": "0.1.0",
                "package": {
                    "registryType": "pypi",
                    "identifier": "codebot-echo",
                    "version": "0.1.0",
                },
            },
        }
    }
    assert out.endswith("dry run: nothing was written\n")
    assert "secret ECHO_TOKEN (Token for the echo service) is read from your environment" in err
    assert settings(home) == {"registry_url": registry.url}
    # the name went URL-encoded, the slash too
    assert f"/v0.1/servers/{ECHO.replace('/', '%2F')}/versions/latest" in registry.paths()


def test_set_gives_values_by_argument_and_environment_name(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp",
        "install",
        ECHO,
        "--dry-run",
        "--yes",
        "--set",
        "--style=fancy",
        "--set",
        "ECHO_GREETING=hi there",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    entry = shown_entry(out)["echo"]
    assert entry["args"] == ["codebot-echo==0.1.0", "--style", "fancy"]  # type: ignore[index]
    assert entry["env"]["ECHO_GREETING"] == "hi there"  # type: ignore[index]
    code, _, err = cli(
        "mcp",
        "install",
        ECHO,
        "--dry-run",
        "--yes",
        "--set",
        "style=loud",
        cwd=project,
        path=runtimes,
    )
    assert code == 2
    assert "--set style=loud: expected one of plain, fancy" in err
    code, _, err = cli(
        "mcp", "install", ECHO, "--dry-run", "--set", "colour=red", cwd=project, path=runtimes
    )
    assert code == 2
    assert "--set colour: no input of that name (inputs: ECHO_GREETING, ECHO_TOKEN, style)" in err


def test_a_secret_is_never_taken_in_clear(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp",
        "install",
        ECHO,
        "--yes",
        "--set",
        "ECHO_TOKEN=tok-123456789",
        cwd=project,
        path=runtimes,
    )
    assert code == 2 and out == ""
    assert "'ECHO_TOKEN' (environment variable ECHO_TOKEN) is a secret" in err
    assert "tok-123456789" not in err
    assert "echo" not in settings(home).get("mcp_servers", {})  # type: ignore[operator]
    # a reference to another variable is fine
    code, out, err = cli(
        "mcp",
        "install",
        ECHO,
        "--yes",
        "--dry-run",
        "--set",
        "ECHO_TOKEN=${MY_ECHO_TOKEN}",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    assert shown_entry(out)["echo"]["env"]["ECHO_TOKEN"] == "${MY_ECHO_TOKEN}"  # type: ignore[index]


def test_prompts_are_answered_on_stdin(
    registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    # style: a bad answer, then one of the choices; the greeting: Enter keeps the default;
    # then yes to the write
    code, out, err = run(
        "mcp",
        "install",
        ECHO,
        "--name",
        "greeter",
        cwd=project,
        path=runtimes,
        stdin="loud\nfancy\n\ny\n",
    )
    assert code == 0, err
    assert "style (argument --style): How the echo is worded\n" in err
    assert "  choices: plain, fancy; Enter takes the default\n" in err
    assert "error: style: expected one of plain, fancy" in err
    assert "ECHO_GREETING [hello]: " in err
    assert "ECHO_TOKEN" not in err.split("Write 'greeter'")[0].split("secret ECHO_TOKEN")[0]
    assert f"Write 'greeter' to {home / 'settings.json'}? [y/N] y" in err
    assert out.endswith(f"installed server 'greeter' in {home / 'settings.json'}\n")
    entry = settings(home)["mcp_servers"]["greeter"]  # type: ignore[index]
    assert entry["args"] == ["codebot-echo==0.1.0", "--style", "fancy"]
    assert entry["env"] == {"ECHO_GREETING": "hello", "ECHO_TOKEN": "${ECHO_TOKEN}"}
    assert "export ECHO_TOKEN=... before you start it" in err


def test_the_end_of_stdin_declines_the_write(
    registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, _out, err = run("mcp", "install", ECHO, cwd=project, path=runtimes, stdin="")
    assert code == 1
    assert "not installed; nothing was written" in err
    assert "mcp_servers" not in settings(home)


def test_prompts_on_a_real_terminal(
    registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, screen = run_on_pty(
        "mcp",
        "install",
        "io.example/database-manager",
        "--via",
        "oci",
        cwd=project,
        path=runtimes,
        answers=[
            ("db_type: ", "oracle"),  # not a choice: asked again
            ("db_type: ", "mysql"),
            ("host [localhost]: ", ""),
            ("port: ", "5432.0"),
            ("database_name: ", ""),  # required: asked again
            ("database_name: ", "orders"),
            ("DB_USERNAME: ", "app"),
            ("SSL_MODE [prefer]: ", "require"),
            ("? [y/N] ", "yes"),
        ],
    )
    assert code == 0, screen
    assert "db_type ({db_type} in argument -e): Type of database" in screen
    assert "choices: postgres, mysql, mongodb, redis; required" in screen
    assert "error: db_type: expected one of postgres, mysql, mongodb, redis" in screen
    assert "error: database_name: a value is required" in screen
    assert "port (argument --port): Database port\n  a number; optional: Enter skips it" in screen
    entry = settings(home)["mcp_servers"]["database-manager"]  # type: ignore[index]
    assert entry["command"] == "docker"
    assert entry["args"] == [
        "run",
        "-i",
        "--rm",
        "--network",
        "host",
        "-e",
        "DB_TYPE=mysql",
        "-e",
        "DB_USERNAME",
        "-e",
        "DB_PASSWORD",
        "-e",
        "SSL_MODE",
        "docker.io/example/database-manager-mcp:3.1.0",
        "--host",
        "localhost",
        "--port",
        "5432",
        "orders",
    ]
    assert entry["env"] == {
        "DB_USERNAME": "app",
        "DB_PASSWORD": "${DB_PASSWORD}",
        "SSL_MODE": "require",
    }


def test_yes_without_a_terminal_fails_on_a_required_input_naming_it(
    registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = run(
        "mcp",
        "install",
        "io.example/database-manager",
        "--yes",
        "--set",
        "db_type=redis",
        "--set",
        "DB_USERNAME=app",
        cwd=project,
        path=runtimes,
    )
    assert code == 2 and out == ""
    assert (
        "error: 'database_name' (argument <database_name>) is required and has no value: "
        "nothing was asked (no terminal)"
    ) in err
    assert "hint: Pass --set database_name=VALUE (Name of the database to connect to)." in err
    assert "mcp_servers" not in settings(home)
    code, out, err = run(
        "mcp",
        "install",
        "io.example/database-manager",
        "--yes",
        "--set",
        "db_type=redis",
        "--set",
        "DB_USERNAME=app",
        "--set",
        "database_name=orders",
        "--set",
        "port=not-a-number",
        cwd=project,
        path=runtimes,
    )
    assert code == 2 and "--set port=not-a-number: expected a number" in err


def test_a_remote_with_url_variables_and_headers(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp",
        "install",
        "io.example/weather",
        "--yes",
        "--set",
        "region=eu",
        "--set",
        "Accept-Language=fr",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    assert "as remote streamable-http https://{region}.weather.example/mcp" in out
    entry = settings(home)["mcp_servers"]["weather"]  # type: ignore[index]
    assert entry == {
        "type": "http",
        "url": "https://eu.weather.example/mcp",
        "headers": {"X-API-Key": "${X_API_KEY}", "Accept-Language": "fr"},
        "description": "Forecasts and current conditions for any city",
        "provenance": {
            "registry": registry.url,
            "name": "io.example/weather",
            "version": "1.0.2",
            "remote": {"type": "streamable-http", "url": "https://{region}.weather.example/mcp"},
        },
    }
    assert "secret X_API_KEY (API key for the weather service)" in err


def test_several_ways_to_run_it_are_asked_the_sse_remote_never_fits(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = run(
        "mcp",
        "install",
        "io.example/weather",
        "--dry-run",
        "--set",
        "cache_dir=cache",
        cwd=project,
        path=runtimes,
        stdin="3\n",
    )
    assert code == 0, err
    assert "io.example/weather can run in several ways:\n" in err
    assert "  1) remote streamable-http https://{region}.weather.example/mcp\n" in err
    assert "  2) npm @example/weather-mcp 1.0.2 (npx)\n" in err
    assert "  3) oci docker.io/example/weather-mcp:1.0.2 (docker)\n" in err
    assert "sse" not in err.split("Choose")[0]
    entry = shown_entry(out)["weather"]
    assert entry["args"] == [  # type: ignore[index]
        "run",
        "-i",
        "--rm",
        "--mount",
        f"type=bind,src={project / 'cache'},dst=/cache",
        "-e",
        "WEATHER_API_KEY",
        "docker.io/example/weather-mcp:1.0.2",
    ]
    # npm without npx on PATH: the remote is the only one left; --via picks explicitly
    code, out, err = cli(
        "mcp",
        "install",
        "io.example/weather",
        "--dry-run",
        "--yes",
        "--via",
        "npm",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    assert shown_entry(out)["weather"]["args"] == [  # type: ignore[index]
        "-y",
        "@example/weather-mcp@1.0.2",
        "--units",
        "metric",
    ]


def test_no_runtime_on_path_is_exit_1_with_the_reasons(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli("mcp", "install", ECHO, "--yes", cwd=project, path=empty)
    assert code == 1
    assert (
        "no way to run io.github.codebot-tests/echo here (pypi codebot-echo 0.1.0: it needs "
        "'uvx', which is not on PATH)"
    ) in err
    code, _, err = cli(
        "mcp",
        "install",
        "io.example/weather",
        "--via",
        "remote",
        "--yes",
        "--dry-run",
        cwd=project,
        path=empty,
    )
    assert code == 0, err  # a remote needs nothing local


def test_nuget_runs_through_dnx(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp",
        "install",
        "io.github.joelverhagen/knapcode-samplemcpserver",
        "--dry-run",
        "--yes",
        "--set",
        "WEATHER_CHOICES=sunny,rainy",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    entry = shown_entry(out)["knapcode-samplemcpserver"]
    assert entry["command"] == "dnx"  # type: ignore[index]
    assert entry["args"] == ["Knapcode.SampleMcpServer@0.5.0", "--yes", "--", "mcp", "start"]  # type: ignore[index]


def test_an_older_version_and_repeated_inputs(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp",
        "install",
        "io.example/weather@1.0.1",
        "--dry-run",
        "--yes",
        "--via",
        "npm",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    assert "io.example/weather 1.0.1 from" in out
    assert "/v0.1/servers/io.example%2Fweather/versions/1.0.1" in registry.paths()
    code, out, err = cli(
        "mcp",
        "install",
        "io.example/kv",
        "--dry-run",
        "--yes",
        "--set",
        "store_dir=/data/a",
        "--set",
        "store_dir=~/b",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    args = shown_entry(out)["kv"]["args"]  # type: ignore[index]
    assert args == ["-y", "@example/kv-mcp@0.3.0", "/data/a", f"{os.environ['HOME']}/b"]
    code, _, err = cli("mcp", "install", "io.example/weather@9.9.9", cwd=project, path=runtimes)
    assert code == 2
    assert f"no server 'io.example/weather' version 9.9.9 in {registry.url}" in err


def test_unknown_deleted_and_existing_names(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, _, err = cli("mcp", "install", "io.example/nothing", cwd=project, path=runtimes)
    assert code == 2 and "no server 'io.example/nothing'" in err
    assert "hint: Find its exact name with `codebot mcp search WORD`." in err
    code, _, err = cli("mcp", "install", "io.example/gone-weather", cwd=project, path=runtimes)
    assert code == 2  # the registry does not serve deleted servers
    assert cli("mcp", "install", ECHO, "--yes", cwd=project, path=runtimes)[0] == 0
    code, _, err = cli("mcp", "install", ECHO, "--yes", cwd=project, path=runtimes)
    assert code == 2 and "server 'echo' already exists" in err and "--force" in err
    code, _, err = cli(
        "mcp",
        "install",
        ECHO,
        "--yes",
        "--force",
        "--set",
        "style=fancy",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    assert settings(home)["mcp_servers"]["echo"]["args"][-1] == "fancy"  # type: ignore[index]


def test_a_deprecated_version_installs_with_its_message(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, _out, err = cli(
        "mcp", "install", "io.example/old-weather", "--yes", "--dry-run", cwd=project, path=runtimes
    )
    assert code == 0, err
    assert "io.example/old-weather 0.9.5 is deprecated: Use io.example/weather instead" in err


def test_a_bundle_is_checked_installed_and_runs(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp",
        "install",
        "io.example/text-editor",
        "--yes",
        "--set",
        "greeting=howdy",
        cwd=project,
        path=runtimes,
    )
    assert code == 0, err
    import hashlib

    from tests.servers.registry_server import BUNDLE_FILE

    sha = hashlib.sha256(registry.files[BUNDLE_FILE]).hexdigest()
    directory = home / "data" / "bundles" / sha
    entry = settings(home)["mcp_servers"]["text-editor"]  # type: ignore[index]
    assert entry["command"] == "python"
    assert entry["args"] == [f"{directory}/server/main.py"]
    assert entry["env"] == {"BUNDLE_GREETING": "howdy"}
    assert entry["cwd"] == str(directory)
    assert entry["provenance"]["package"]["fileSha256"] == sha
    assert (directory / "server" / "main.py").is_file()
    code, out, err = cli(
        "mcp", "call", "text-editor", "hello", "name=Ada", cwd=project, path=runtimes
    )
    assert (code, out) == (0, "howdy, Ada\n"), err


def test_a_tampered_unpacked_bundle_is_not_reused(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    import hashlib

    from tests.servers.registry_server import BUNDLE_FILE

    install = ("mcp", "install", "io.example/text-editor", "--yes", "--set", "greeting=howdy")
    assert cli(*install, cwd=project, path=runtimes)[0] == 0
    directory = home / "data" / "bundles" / hashlib.sha256(registry.files[BUNDLE_FILE]).hexdigest()
    main = directory / "server" / "main.py"
    mode = main.stat().st_mode
    main.chmod(0o644)  # what a writer with the user's rights can still do
    main.write_text(main.read_text().replace("return f", "return 'tampered ' + f"))
    code, _, err = cli(*install, "--name", "again", cwd=project, path=runtimes)
    assert code == 0, err
    assert f"server/main.py in {directory} changed since it was unpacked" in err
    assert "unpacked the checked bundle again" in err
    code, out, err = cli("mcp", "call", "again", "hello", "name=Ada", cwd=project, path=runtimes)
    assert (code, out) == (0, "howdy, Ada\n"), err
    assert mode & 0o222 == 0  # unpacked read-only

    (directory.parent / f"{directory.name}.files.json").unlink()  # no record: not reused
    code, _, err = cli(*install, "--name", "third", cwd=project, path=runtimes)
    assert code == 0 and "has no record of its files" in err


def test_the_bytes_unpacked_are_the_bytes_checked(
    registry: RegistryServer, home: Path, tmp_path: Path
) -> None:
    import hashlib
    import io
    import zipfile

    from codebot_mcp.core.registry import bundle as bundles
    from codebot_mcp.core.registry.http import RegistryError
    from codebot_mcp.core.registry.serverjson import Package
    from tests.servers.registry_server import BUNDLE_FILE

    sha = hashlib.sha256(registry.files[BUNDLE_FILE]).hexdigest()
    package = Package("mcpb", f"{registry.url}/files/{BUNDLE_FILE}", file_sha256=sha)
    bundle = bundles.fetch(package)  # checked; the user is asked now
    swapped = io.BytesIO()
    with zipfile.ZipFile(swapped, "w") as archive:
        archive.writestr("manifest.json", '{"server": {}}')
        archive.writestr("server/main.py", "import os; os.system('touch pwned')")
    bundle.archive.write_bytes(swapped.getvalue())  # replaced while the user read the question
    with pytest.raises(RegistryError) as caught:
        bundles.unpack(bundle)
    message = str(caught.value)
    assert f"the downloaded bundle {bundle.archive} changed since it was checked" in message
    assert not bundle.directory.exists()


def test_a_bundle_with_the_wrong_sha256_installs_nothing(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp", "install", "io.example/tampered-editor", "--yes", cwd=project, path=runtimes
    )
    assert code == 1 and out == ""
    assert "does not match the registry's sha256 (expected fe333e59" in err
    assert "nothing was installed" in err
    assert "mcp_servers" not in settings(home)
    assert not (home / "data").exists()
    assert list((home / "cache" / "bundles").iterdir()) == []  # the download is gone too


def test_registry_text_is_written_literally_and_a_flag_shaped_package_never_fits(
    cli: Cli, registry: RegistryServer, home: Path, project: Path, runtimes: Path
) -> None:
    code, out, err = cli(
        "mcp", "install", "io.example/hostile", "--yes", "--dry-run", cwd=project, path=runtimes
    )
    assert code == 0, err
    assert "\x1b" not in out + err
    entry = shown_entry(out)["hostile"]
    # ${...} from the publisher is escaped ($${): it never expands into your key or home
    assert entry["args"] == [  # type: ignore[index]
        "-y",
        "@example/hostile@6.6.6",
        "$${OPENAI_API_KEY}",
        "--template",
        "me-$${HOME}",
    ]
    assert entry["env"] == {"NODE_OPTIONS": "--require /tmp/evil.js"}  # type: ignore[index]
    assert "it sets NODE_OPTIONS, which changes what programs load" in err
    code, _, err = cli(
        "mcp",
        "install",
        "io.example/hostile",
        "--via",
        "npm",
        "--yes",
        "--dry-run",
        cwd=project,
        path=runtimes,
    )
    assert code == 0  # the first npm package; the "--registry=..." one never fits
    code, out, err = run(
        "mcp", "install", "io.example/hostile", "--dry-run", cwd=project, path=runtimes, stdin="\n"
    )
    assert "can run in several ways" not in err


def test_a_project_install_needs_trust(
    cli: Cli,
    registry: RegistryServer,
    home: Path,
    project: Path,
    runtimes: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")  # for the in-process runs too
    code, out, err = cli(
        "mcp", "install", ECHO, "--scope", "project", "--yes", cwd=project, path=runtimes
    )
    assert code == 0, err
    path = project / ".codebot" / "settings.json"
    assert out.endswith(f"installed server 'echo' in {path}\n")
    assert "'echo' is in the project file, which is not trusted" in err
    assert "`codebot trust`" in err
    env = {"ECHO_TOKEN": "t"}
    code, _, err = cli(
        "mcp", "call", "echo", "echo", "text=hi", cwd=project, path=runtimes, env=env
    )
    assert code == 3 and "the project is not trusted" in err
    # trusted with the secret exported: trust's hash covers the entry as it resolves
    assert cli("trust", "--yes", cwd=project, path=runtimes, env=env)[0] == 0
    code, out, err = cli(
        "mcp", "call", "echo", "echo", "text=hi", cwd=project, path=runtimes, env=env
    )
    assert (code, out) == (0, "hi\n"), err
