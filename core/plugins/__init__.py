"""Claude Code plugins and marketplaces: fetching them (a folder, a git URL, a
``marketplace.json`` URL), installing a plugin into codebot's data directory with what it
runs shown first, updating, enabling, disabling and removing it.

Reading a plugin and loading the enabled ones is :mod:`core.config.plugins` (settings loading
needs it); this package sits above ``registry`` for its bounded HTTP client. Nothing here
asks the user: :mod:`cli.commands.plugin` shows :class:`.install.Prepared` and asks.
"""
