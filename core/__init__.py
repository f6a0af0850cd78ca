"""codebot core: settings, tools, permissions, the session and the agent loop.

``core`` never imports ``mcp``, ``typer`` or ``prompt_toolkit``.
"""

__version__ = "0.1.0"
