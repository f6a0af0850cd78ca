"""Claude Code plugins and marketplaces: fetching them (:mod:`.fetch`: a folder, a git URL, a
``marketplace.json`` URL), marketplaces (:mod:`.marketplace`), installing a plugin into
codebot's data directory with what it runs shown first, updating, enabling, disabling and
removing it (:mod:`.plugininstall`).

Reading a plugin and loading the enabled ones is :mod:`core.config.plugins` (settings loading
needs it); this package sits above ``registry`` for its bounded HTTP client. Nothing here
asks the user: :mod:`cli.commands.plugin` shows :class:`.plugininstall.Prepared` and asks.
"""
