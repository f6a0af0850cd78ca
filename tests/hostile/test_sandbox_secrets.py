"""Secrets are not readable from inside the sandbox (issue 29, item 4).

A confined ``bash`` ran ``cat ~/.ssh/id_ed25519`` without asking, and the key went to the
model. Every command here runs through the real ``bash`` tool in the real sandbox (the exec
helper: Landlock, user, network and mount namespaces), over a home of its own (``HOME`` is a
temporary directory holding fake credentials, so no test reads the developer's). Each test
that proves a secret stays hidden checks that its content is absent from what the model
reads, and that the result names the sandbox; its control, the same command with
``"sandbox": false``, reads the secret, so a test cannot pass because the command was broken.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.config import settings as settings_mod
from codebot_mcp.core.config.sandboxing import ServerSandbox
from codebot_mcp.core.proc import helper
from codebot_mcp.core.sandbox.confinement import Sandbox, support
from codebot_mcp.core.sandbox.hiding import HIDDEN_IN_HOME, settings_secrets
from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.core.tools.builtin import BashTool
from tests.helpers import write_settings

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only"),
]


def _missing() -> list[str]:
    return support().missing(network=False) if sys.platform.startswith("linux") else []


needs_sandbox = pytest.mark.skipif(
    bool(_missing()), reason=f"the sandbox is unavailable: {_missing()}"
)

SECRETS = {
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY----- ssh-secret-0001",
    ".gnupg/private-keys-v1.d/k.key": "gpg-secret-0002",
    ".aws/credentials": "aws_secret_access_key = aws-secret-0003",
    ".azure/msal_token_cache.json": "azure-secret-0004",
    ".config/gcloud/application_default_credentials.json": "gcloud-secret-0005",
    ".config/gh/hosts.yml": "oauth_token: gh-secret-0006",
    ".kube/config": "token: kube-secret-0007",
    ".docker/config.json": '{"auths": {"x": {"auth": "docker-secret-0008"}}}',
    ".netrc": "machine h login u password netrc-secret-0009",
    ".npmrc": "//registry.npmjs.org/:_authToken=npm-secret-0010",
    ".pypirc": "password = pypi-secret-0011",
    ".local/share/keyrings/login.keyring": "keyring-secret-0012",
    ".password-store/site.gpg": "pass-secret-0013",
    ".mozilla/firefox/p/logins.json": "firefox-secret-0014",
    ".config/google-chrome/Default/Login Data": "chrome-secret-0015",
    ".config/chromium/Default/Cookies": "chromium-secret-0016",
}


class Home:
    """A home of fake credentials, a project beside it, and the bash tool in a sandbox."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **sandbox: Any):
        self.home = tmp_path / "userhome"
        self.project = tmp_path / "project"
        self.project.mkdir()
        for rel, content in SECRETS.items():
            path = self.home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content + "\n")
        monkeypatch.setenv("HOME", str(self.home))
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "GNUPGHOME", "KUBECONFIG"):
            monkeypatch.delenv(name, raising=False)
        self.sandbox = Sandbox("workspace-write", workspace=self.project, **sandbox)
        self.tool = BashTool(self.project, self.project, self.sandbox)

    async def run(self, command: str, **extra: Any) -> ToolResult:
        return await self.tool.execute({"command": command, **extra})


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Home]:
    made = Home(tmp_path, monkeypatch)
    yield made
    made.sandbox.close()


def hidden(result: ToolResult, secret: str, path: Path | None = None) -> None:
    """The secret is not in what the model reads, and the result says the sandbox hid it."""
    assert secret not in result.text, result.text
    assert "sandbox" in result.text.lower(), result.text
    assert '"sandbox": false' in result.text, result.text  # how to get it, if really needed
    if path is not None:
        assert str(path) in result.text, result.text


@needs_sandbox
@pytest.mark.parametrize("rel", list(SECRETS))
async def test_well_known_credentials_are_hidden(home: Home, rel: str) -> None:
    secret = SECRETS[rel]
    path = home.home / rel
    entry = next(e for e in HIDDEN_IN_HOME if rel == e or rel.startswith(e + "/"))
    result = await home.run(f"cat {shlex.quote(str(path))}")
    hidden(result, secret, home.home / entry)  # the note names what is hidden
    assert path.read_text() == secret + "\n"  # hidden, not touched
    control = await home.run(f"cat {shlex.quote(str(path))}", sandbox=False)
    assert secret in control.text and control.data["sandbox"] == "off"


@needs_sandbox
async def test_a_directory_looks_empty_a_file_reads_empty(home: Home) -> None:
    result = await home.run("ls -A ~/.ssh | wc -l; wc -c < ~/.netrc; echo done")
    assert not result.is_error, result.text
    assert result.text.splitlines()[:3] == ["0", "0", "done"]
    assert "is hidden" in result.text or "are hidden" in result.text  # named: a note follows


@needs_sandbox
async def test_ways_around_lead_nowhere(home: Home) -> None:
    key = SECRETS[".ssh/id_ed25519"]
    (home.project / "link").symlink_to(home.home / ".ssh" / "id_ed25519")
    (home.project / "dirlink").symlink_to(home.home / ".ssh")
    for command in (
        "cat link",
        "cat dirlink/id_ed25519",
        "cd && cat .ssh/id_ed25519",
        'cat "$HOME/.ssh/../.ssh/id_ed25519"',
        f"cat /proc/self/root{home.home}/.ssh/id_ed25519",
        f"cat /proc/$$/root{home.home}/.ssh/id_ed25519",
        f"cat /proc/$PPID/root{home.home}/.ssh/id_ed25519",  # codebot's own view: refused
        "cp -r ~/.ssh copied && cat copied/*",
        "tar cf - -C ~ .ssh | tar xOf -",
        "python3 -c \"print(open('$HOME/.ssh/id_ed25519').read())\"",
        "umount ~/.ssh; cat ~/.ssh/id_ed25519",
        "umount -l ~/.ssh; cat ~/.ssh/id_ed25519",
        "unshare -rm sh -c 'umount ~/.ssh; cat ~/.ssh/id_ed25519'",
        "mv ~/.ssh ~/moved; cat ~/moved/id_ed25519",
    ):
        result = await home.run(command)
        assert key not in result.text, (command, result.text)
        assert "sandbox" in result.text.lower(), (command, result.text)
    for sweep in (  # name no hidden path: nothing to note, and nothing found
        "grep -ra secret- ~ 2>/dev/null",
        "find ~ -type f -exec cat {} + 2>/dev/null",
        f"find {home.home} {home.project} -name 'id_ed25519*' 2>/dev/null | xargs -r cat",
    ):
        result = await home.run(sweep)
        assert not any(s in result.text for s in SECRETS.values()), (sweep, result.text)
    link_target = await home.run(f"readlink -f {home.project / 'link'}")
    assert link_target.text.startswith(str(home.home)), link_target.text  # links still resolve
    assert (home.home / ".ssh" / "id_ed25519").read_text() == key + "\n"
    control = await home.run("cat link", sandbox=False)
    assert key in control.text


@needs_sandbox
async def test_hidden_even_where_home_is_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Home is writable (a chat started in ``~``: home is the workspace; a ``writable`` entry
    holding home is refused since issue 29 item 2), the credentials in it still are not
    readable, nor movable, nor writable (no key planted in ``authorized_keys``)."""
    made = Home(tmp_path, monkeypatch)
    made.sandbox.close()
    made.sandbox = Sandbox("workspace-write", workspace=made.home)
    made.tool = BashTool(made.home, made.home, made.sandbox)
    try:
        key = SECRETS[".ssh/id_ed25519"]
        result = await made.run(
            "echo made > ~/made.txt; cat ~/.ssh/id_ed25519; mv ~/.ssh ~/gone; "
            "rm -rf ~/.ssh; echo planted >> ~/.ssh/authorized_keys; cat ~/gone/id_ed25519"
        )
        assert key not in result.text
        assert (made.home / "made.txt").read_text() == "made\n"  # the rest of home is writable
        assert (made.home / ".ssh" / "id_ed25519").read_text() == key + "\n"
        assert not (made.home / ".ssh" / "authorized_keys").exists()
        assert not (made.home / "gone").exists()
        hidden(result, key, made.home / ".ssh")
        # Moving a folder that holds a hidden path, for the next command to read it under
        # the new name: each such folder is a mount point inside, so it cannot be moved.
        moved = await made.run(
            "mv ~/.docker ~/dk; mv ~/.config ~/cfg; mv ~/.local/share ~/share; "
            "mv ~/.mozilla/firefox ~/ff; ls ~"
        )
        assert not (made.home / "dk").exists() and not (made.home / "cfg").exists(), moved.text
        assert "Device or resource busy" in moved.text  # (mv copies ~/.local/share: empty)
        after = await made.run(
            "cat ~/dk/config.json ~/cfg/gh/hosts.yml ~/share/keyrings/login.keyring "
            "~/ff/p/logins.json ~/.docker/config.json ~/.config/gh/hosts.yml 2>&1"
        )
        assert not any(s in after.text for s in SECRETS.values()), after.text
        assert (made.home / ".config" / "gh" / "hosts.yml").exists()
    finally:
        made.sandbox.close()


@needs_sandbox
async def test_a_credential_made_after_the_session_started_is_hidden_too(home: Home) -> None:
    """The list is taken at each command: ``aws configure`` run since is covered."""
    first = await home.run("echo warm")
    assert not first.is_error
    vault = home.home / ".vault-token"
    vault.write_text("vault-secret-0099\n")
    hidden(await home.run("cat ~/.vault-token"), "vault-secret-0099", vault)


@needs_sandbox
async def test_deny_read_adds_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / "project" / ".env.local"
    tokens = tmp_path / "userhome" / "tool-tokens"
    made = Home(tmp_path, monkeypatch, deny_read=[env_file, tokens])
    try:
        env_file.write_text("API_KEY=env-secret-0100\n")
        tokens.mkdir()
        (tokens / "t.json").write_text("tool-secret-0101\n")
        hidden(await made.run("cat .env.local"), "env-secret-0100", env_file)
        hidden(await made.run("cat ../project/.env.local"), "env-secret-0100", env_file)
        hidden(await made.run("cat ~/tool-tokens/t.json"), "tool-secret-0101", tokens)
        assert env_file.read_text() == "API_KEY=env-secret-0100\n"
        allowed = await made.run("echo other > other.txt && cat other.txt")
        assert allowed.text == "other"  # the rest of the project as before
    finally:
        made.sandbox.close()


@needs_sandbox
async def test_codebot_token_store_and_files_variables_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = Path(os.environ["CODEBOT_HOME"]) / "state"
    tokens = state / "oauth" / "abc" / "tokens.json"
    tokens.parent.mkdir(parents=True)
    tokens.write_text('{"access_token": "oauth-secret-0200"}\n')
    account = tmp_path / "keys" / "service-account.json"
    account.parent.mkdir()
    account.write_text("sa-secret-0201\n")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(account))
    made = Home(tmp_path, monkeypatch)
    try:
        hidden(await made.run(f"cat {tokens}"), "oauth-secret-0200", state / "oauth")
        hidden(await made.run(f"cat {account}"), "sa-secret-0201", account)
    finally:
        made.sandbox.close()


def test_files_the_settings_name_as_secrets(tmp_path: Path) -> None:
    """A server's credential-named ``env`` naming a file, and a global settings file that
    holds a credential in clear, are hidden; plain settings are not."""
    key_file = tmp_path / "pem" / "signing.pem"
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "s": {
                    "command": "x",
                    "env": {"SIGNING_KEY_FILE": str(key_file), "MODE": "/usr/share/x"},
                }
            }
        },
    )
    global_file = Path(os.environ["CODEBOT_HOME"]) / "settings.json"
    global_file.parent.mkdir(parents=True, exist_ok=True)
    global_file.write_text(json.dumps({"model": "gpt-4o"}))
    named = settings_secrets(settings_mod.load_unfiltered(tmp_path))
    assert named == [key_file]
    bearer = {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz0123456789"}
    clear = {"mcp_servers": {"g": {"url": "https://h/mcp", "headers": bearer}}}
    global_file.write_text(json.dumps(clear))
    assert settings_secrets(settings_mod.load_unfiltered(tmp_path)) == [
        key_file,
        global_file.resolve(),
    ]


@needs_sandbox
async def test_the_note_only_where_a_hidden_path_is_named(home: Home) -> None:
    plain = await home.run("echo hello; cat missing.txt")
    assert "hidden" not in plain.text
    assert "~/.ssh" not in plain.text


@needs_sandbox
def test_the_helper_refuses_a_symlink_to_hide(tmp_path: Path) -> None:
    """The helper covers what it checked: a path that turned into a symlink since codebot
    resolved it stops the start (exit 125), never runs the command with it uncovered."""
    located = helper.locate()
    assert located is not None
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "k").write_text("symlink-secret\n")
    (tmp_path / "swapped").symlink_to(tmp_path / "real")
    argv = [str(located), "--sandbox", "--hide", str(tmp_path / "swapped"), "--"]
    ran = subprocess.run(
        [*argv, "cat", str(tmp_path / "real" / "k")], capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == 125 and "symlink" in ran.stderr
    assert "symlink-secret" not in ran.stdout
    fine = subprocess.run(
        [
            str(located),
            "--sandbox",
            "--hide",
            str(tmp_path / "real"),
            "--",
            "ls",
            "-A",
            str(tmp_path / "real"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (fine.returncode, fine.stdout) == (0, "")


def test_a_confined_server_hides_the_same_and_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio server entry's sandbox covers the built-in list and its own ``deny_read``
    (the helper's ``--hide``, as for ``bash``); the global setting's does not reach it."""
    home = tmp_path / "userhome"
    (home / ".ssh").mkdir(parents=True)
    own = tmp_path / "server-secret.txt"
    own.write_text("x\n")
    monkeypatch.setenv("HOME", str(home))
    spec = ServerSandbox("read-only", workspace=tmp_path, deny_read=(own,))
    sandbox = Sandbox.for_server(spec, tmp_path)
    try:
        hidden = sandbox.confinement().hidden
        assert str(home / ".ssh") in hidden and str(own) in hidden
    finally:
        sandbox.close()


@needs_sandbox
def test_slash_sandbox_lists_what_is_hidden(home: Home) -> None:
    report = home.sandbox.report()
    at = report.index("hidden (credentials; sandbox.deny_read adds more):")
    listed = [line.strip() for line in report[at + 1 :] if line.startswith("  ")]
    assert str(home.home / ".ssh") in listed and str(home.home / ".netrc") in listed


@needs_sandbox
async def test_read_only_and_network_modes_hide_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = Home(tmp_path, monkeypatch)
    made.sandbox.close()
    key = SECRETS[".ssh/id_ed25519"]
    for sandbox in (
        Sandbox("read-only", workspace=made.project),
        Sandbox("workspace-write", network=True, workspace=made.project),
    ):
        try:
            tool = BashTool(made.project, made.project, sandbox)
            result = await tool.execute({"command": "cat ~/.ssh/id_ed25519"})
            hidden(result, key, made.home / ".ssh")
        finally:
            sandbox.close()
