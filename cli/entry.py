"""The console script: ``codebot`` runs :func:`main`.

Kept free of Typer: a warm ``mcp call`` (:func:`cli.warm_client.fast_call`) is answered before
the command line parser is even imported; everything else goes to :func:`cli.app.run`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import NoReturn

from codebot_mcp.cli.warm_client import fast_call
from codebot_mcp.core import gcpause


def _ordinary(argv: list[str]) -> int:
    from codebot_mcp.cli.app import run

    return run(argv)


def main() -> NoReturn:
    """Console-script entry point."""
    gcpause.hold()  # until the work begins (core.gcpause): start-up's heap is not walked
    from codebot_mcp.core.proc import descendants  # standard library only
    from codebot_mcp.mcpbridge.transport import reaper  # standard library only

    descendants.arm()  # codebot adopts orphaned descendants; none outlives it (below)
    reaper.arm()  # one-shot commands may leave their servers' shutdown to a reaper
    # ${CODEBOT_PYTHON}: this interpreter (core.config.settings.PYTHON_VARIABLE), for what runs
    # from here (the loader itself defaults it); set before a warm call compares environments.
    os.environ.setdefault("CODEBOT_PYTHON", sys.executable)
    code = fast_call(sys.argv[1:], _ordinary)  # a warm `mcp call`, without Typer
    if code is None:
        from codebot_mcp.cli.app import run

        code = run()
    descendants.sweep()  # whatever left its process group (setsid) and is still running
    if reaper.pending():
        # Results first: the output is complete; the reaper stops the servers after we exit.
        # os._exit: finalizers of the handed-off processes would otherwise kill them at once.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)  # the reaper's pipe closes: it takes over from here
    # The SDKs leave a large heap; tearing it down through the collector costs 100-800 ms
    # at exit. Frozen objects are skipped: the process is ending anyway.
    gc.freeze()
    sys.exit(code)
