"""``codebot models``: the configured endpoint's models (or the local servers found)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.runtime import Globals, load_effective
from codebot_mcp.core.errors import ExitCode, ModelError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatOptions
    from codebot_mcp.core.model.localservers import Found

app = typer.Typer()
"""Holds ``models``; :mod:`cli.app` adds it to the root."""


@app.command("models")
def models_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> int:
    """List the models of the configured endpoint (--base-url, OPENAI_BASE_URL, base_url).

    With no API key and no base URL, list the local servers found instead (Ollama,
    llama.cpp, LM Studio, vLLM). Exit 0, 5 the endpoint failed or none was found.
    """
    from codebot_mcp.core.model import localservers as discovery
    from codebot_mcp.core.model.config import resolve_config

    globals_: Globals = ctx.obj
    settings = load_effective(globals_).settings  # an untrusted project's endpoint gets no key
    try:
        config = resolve_config(settings, model=globals_.model, base_url=globals_.base_url)
    except ModelError as exc:
        found = discovery.probe()
        if not found:
            raise ModelError(exc.message, hint=f"{exc.hint} {nothing_found()}") from None
        if as_json:
            render.print_json(
                {
                    "endpoints": [
                        {"name": f.name, "base_url": f.base_url, "models": list(f.models)}
                        for f in found
                    ]
                }
            )
        else:
            print("No endpoint is configured; found on this machine:")
            for line in describe(found):
                print(f"  {render.safe(line, one_line=True)}")  # ids are the endpoint's text
        return ExitCode.OK
    names = discovery.list_models(config.url, config.api_key if config.key_env else None)
    if as_json:
        render.print_json({"base_url": config.url, "models": names})
    else:
        for name in names:
            print(render.safe(name, one_line=True))  # a stranger's text: escapes shown, not run
    return ExitCode.OK


def nothing_found() -> str:
    """The hint's tail when the probe found nothing."""
    from codebot_mcp.core.model import localservers as discovery

    ports = ", ".join(f"{c.name} {c.port}" for c in discovery.CANDIDATES)
    return f"(No local server answered on 127.0.0.1: {ports}.)"


def describe(found: list[Found]) -> list[str]:
    """One line per server found: name, base URL, models (shortened)."""
    lines = []
    for f in found:
        shown = ", ".join(f.models[:8])
        if len(f.models) > 8:
            shown += f", … ({len(f.models)} in all)"
        lines.append(f"{f.name} at {f.base_url}: {shown or 'no models loaded'}")
    return lines


def offer_local(globals_: Globals, options: ChatOptions, *, interactive: bool) -> None:
    """With no API key and no base URL: look for a local server and offer it.

    In a terminal the user picks one (and the model, when none is named); otherwise the
    servers found are listed on stderr with the command line that uses them, and chat fails
    as before (exit 5) — a script should say which endpoint it means.
    """
    import sys

    from codebot_mcp.core.model import localservers as discovery
    from codebot_mcp.core.model.config import resolve_config

    settings = load_effective(globals_, warn=False).settings
    try:
        resolve_config(settings, model=options.model, base_url=options.base_url)
        return
    except ModelError:
        pass
    found = discovery.probe()
    if not found:
        return
    print("No model endpoint is configured; found on this machine:", file=sys.stderr)
    for i, line in enumerate(describe(found), 1):
        print(f"  {i}. {render.safe(line, one_line=True)}", file=sys.stderr)
    if not interactive:
        first = found[0]
        model = f" --model {first.models[0]}" if first.models else ""
        render.hint(f"Use one with: codebot chat --base-url {first.base_url}{model} ...")
        return
    choice = _ask(
        f"Use {'which one [1-' + str(len(found)) + ']' if len(found) > 1 else 'it'}? "
        f"[{'1' if len(found) > 1 else 'Y'}/n] "
    )
    if choice in ("n", "no"):
        return
    index = int(choice) - 1 if choice.isdigit() and 0 < int(choice) <= len(found) else 0
    chosen = found[index]
    options.base_url = chosen.base_url
    if options.model is None and chosen.models:
        model = chosen.models[0]
        if len(chosen.models) > 1:
            for i, name in enumerate(chosen.models, 1):
                print(f"  {i}. {render.safe(name, one_line=True)}", file=sys.stderr)
            answer = _ask(f"Model [1-{len(chosen.models)}, default 1]: ")
            if answer.isdigit() and 0 < int(answer) <= len(chosen.models):
                model = chosen.models[int(answer) - 1]
        options.model = model
    print(
        f"Using {chosen.name} at {chosen.base_url}"
        + (f", model {render.safe(options.model, one_line=True)}" if options.model else "")
        + f' (next time: --base-url {chosen.base_url}, or "base_url" in settings.json)',
        file=sys.stderr,
    )


def _ask(question: str) -> str:
    try:
        return input(question).strip().lower()
    except (EOFError, KeyboardInterrupt):
        return "n"
