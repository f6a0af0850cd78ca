"""Opening a URL in the user's browser: ``$BROWSER`` read at each call, in a daemon thread."""

from __future__ import annotations

import os
import threading
from functools import partial
from typing import Any

from codebot_mcp.core.proc.descendants import opened

__all__ = ["open_in_browser"]


def open_in_browser(url: str) -> bool:
    """Open ``url`` with ``$BROWSER`` (read now, not when Python first looked) or the system's
    browser, in a daemon thread (a ``$BROWSER`` command may wait for its window). False when
    no browser can be found."""
    named = [c for c in os.environ.get("BROWSER", "").split(os.pathsep) if c]
    for choice in [*named, None]:
        browser = _browser(choice)
        if browser is not None:
            # the window outlives codebot: spare what the browser starts (core.proc.descendants)
            threading.Thread(target=opened, args=(partial(browser.open, url),), daemon=True).start()
            return True
    return False


def _browser(choice: str | None) -> Any:
    """``webbrowser.get(choice)``; a ``$BROWSER`` command set after Python first looked (it
    registers ``$BROWSER`` once per process) becomes a ``GenericBrowser`` of its own."""
    import shlex
    import shutil
    import webbrowser

    try:
        return webbrowser.get(choice)
    except webbrowser.Error:
        pass
    if choice is None:
        return None
    try:
        argv = shlex.split(choice)
    except ValueError:
        return None
    if not argv or shutil.which(argv[0]) is None:
        return None
    return webbrowser.GenericBrowser(argv if "%s" in choice else [*argv, "%s"])
