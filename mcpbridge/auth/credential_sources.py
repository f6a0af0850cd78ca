"""Where a browserless grant's credential comes from: the workload JWT of ``jwt_bearer``
(``oauth.assertion`` / ``oauth.assertion_file``) and the user's ID token of
``identity_assertion`` (``oauth.id_token`` / ``oauth.id_token_file`` /
``oauth.id_token_command``).

Each is read afresh at every token request: a projected service-account token rotates, and a
command prints a new ID token when the old one expired. Files and command output are bounded
in size; the command runs without a shell, through :func:`core.proc.oneshot.run_once` (own
process group, killed with everything it started when it ends or times out) with the
minimal child environment servers get. What is read is a secret of this run: added to the
process-wide redactor at once, and never part of a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codebot_mcp.core.config.oauth import OAuthSettings
from codebot_mcp.core.secrets.redact import SECRETS
from codebot_mcp.mcpbridge.auth.auth_errors import GrantError

MAX_TOKEN_BYTES = 64 * 1024
"""A JWT is a few kilobytes; a file or an output larger than this is not a token."""
COMMAND_TIMEOUT_SECONDS = 30.0
"""An identity provider's CLI may refresh a session over the network; longer is a hang."""


class CredentialError(GrantError):
    """The assertion or ID token could not be read; ``hint`` names the key to fix."""


@dataclass(frozen=True, slots=True)
class CredentialSource:
    """One configured source: a value, a file or a command (exactly one is set)."""

    what: str
    """For messages: "the assertion", "the ID token"."""
    key: str
    """The settings key it comes from (``oauth.assertion_file``)."""
    value: str | None = None
    file: Path | None = None
    command: tuple[str, ...] | None = None
    cwd: Path | None = None

    async def read(self) -> str:
        """The credential, stripped of surrounding whitespace.

        Raises:
            CredentialError: the file or command gave nothing usable.
        """
        if self.value is not None:
            token = self.value.strip()
        elif self.file is not None:
            token = self._read_file(self.file)
        else:
            token = await self._run()
        if not token or any(c.isspace() for c in token):
            raise CredentialError(
                f"{self.what} from '{self.key}' is empty or not one token",
                f"Check '{self.key}': it must give the token alone (a JWT), nothing else.",
            )
        SECRETS.add([token])
        return token

    def _read_file(self, path: Path) -> str:
        try:
            with path.open("rb") as f:
                data = f.read(MAX_TOKEN_BYTES + 1)
        except OSError as exc:
            raise CredentialError(
                f"cannot read {self.what} from {path} ('{self.key}'): {exc.strerror or exc}",
                f"Check that '{self.key}' names a readable file (a projected token is often "
                "under /var/run/secrets/...).",
            ) from None
        if len(data) > MAX_TOKEN_BYTES:
            raise CredentialError(
                f"{path} ('{self.key}') is larger than {MAX_TOKEN_BYTES // 1024} KiB: not a token",
                f"Point '{self.key}' at the file that holds the token alone.",
            )
        return data.decode("utf-8", errors="replace").strip()

    async def _run(self) -> str:
        from codebot_mcp.core.proc.lookup import child_environment
        from codebot_mcp.core.proc.oneshot import run_once

        assert self.command is not None
        name = self.command[0]
        try:
            done = await run_once(
                self.command,
                stdin=b"",
                env=child_environment({}),
                cwd=self.cwd or Path.cwd(),
                limit=COMMAND_TIMEOUT_SECONDS,
                max_output=MAX_TOKEN_BYTES,
            )
        except OSError as exc:
            raise CredentialError(
                f"cannot run '{name}' ('{self.key}'): {exc.strerror or exc}",
                f"Check the command in '{self.key}' (it runs without a shell, with PATH, HOME "
                "and USER of this environment only).",
            ) from None
        if done.timed_out:
            raise CredentialError(
                f"'{name}' ('{self.key}') printed no token within {COMMAND_TIMEOUT_SECONDS:g} s",
                f"Run the command of '{self.key}' by hand: it must print the ID token and exit.",
            )
        if done.code != 0:
            raise CredentialError(
                f"'{name}' ('{self.key}') exited with code {done.code}",
                f"Run the command of '{self.key}' by hand to see why (it may need a login).",
            )
        if "bytes cut]" in done.stdout:
            raise CredentialError(
                f"'{name}' ('{self.key}') printed more than {MAX_TOKEN_BYTES // 1024} KiB",
                f"The command of '{self.key}' must print the ID token alone.",
            )
        return done.stdout.strip()


def assertion_source(oauth: OAuthSettings, base: Path) -> CredentialSource:
    """``jwt_bearer``'s workload JWT (the settings checked that exactly one source is set)."""
    if oauth.assertion is not None:
        return CredentialSource("the assertion", "oauth.assertion", value=oauth.assertion)
    assert oauth.assertion_file is not None
    return CredentialSource(
        "the assertion", "oauth.assertion_file", file=_path(oauth.assertion_file, base)
    )


def id_token_source(oauth: OAuthSettings, base: Path) -> CredentialSource:
    """``identity_assertion``'s ID token."""
    if oauth.id_token is not None:
        return CredentialSource("the ID token", "oauth.id_token", value=oauth.id_token)
    if oauth.id_token_file is not None:
        return CredentialSource(
            "the ID token", "oauth.id_token_file", file=_path(oauth.id_token_file, base)
        )
    return CredentialSource(
        "the ID token", "oauth.id_token_command", command=oauth.id_token_command, cwd=base
    )


def _path(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path
