"""codebot core: a thin kernel, the features over it, and the services under it.

The kernel: settings loading (:mod:`.config`), the tool protocol and the built-in tools
(:mod:`.tools`), the model API (:mod:`.model`), and the loop, the session and the approval
gate (:mod:`.agent`), which knows the features only through its protocols
(``core.agent.protocols``, ``core.agent.approvals``).

The features, one package each, importing the kernel and never each other:
:mod:`.checkpoints` (snapshots and rewind), :mod:`.hooks` (the user's hook commands),
:mod:`.jobs` (background jobs and their tools), :mod:`.skills` (local and served skills),
:mod:`.subagents` (``task``), :mod:`.slashcommands` (custom slash commands),
:mod:`.telemetry` (OpenTelemetry export), :mod:`.plugins` (Claude Code plugins and
marketplaces); under them :mod:`.registry` (the MCP Registry), whose HTTP client plugins fetch
through. Each feature owns its settings section and registers it with the kernel's registry
(``core.config.sections``), its tools with the kernel's (``core.tools.featuretools``), and
its part of the loop (hooks, checkpoints) with the kernel's (``core.agent.loopparts``);
above them all, :mod:`.sectionlist`, :mod:`.toollist` and :mod:`.looplist` are the one lists
of the modules that declare a section, bring tools or a loop part, imported by name on first
use.
A service feature under the kernel's tools, since ``bash`` runs in it: :mod:`.sandbox`
(confinement).

Under everything: :mod:`.media` (images), :mod:`.secrets` (redaction), :mod:`.proc` (child
processes) and the plain helpers :mod:`.errors`, :mod:`.envexpand`, :mod:`.fsutil`,
:mod:`.inflate` and :mod:`.jsonutil`, the collector paused while a process starts
(:mod:`.gcpause`), and the one size cap on HTTP answers (model, MCP,
registry): :mod:`.httpcap`. ``[tool.importlinter]`` in ``pyproject.toml`` holds the
order. ``core`` never imports ``mcp``, ``typer`` or ``prompt_toolkit``.
"""

__version__ = "0.1.0"
