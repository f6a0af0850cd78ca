"""Configuration, the kernel's bottom: where codebot keeps its files (:mod:`.paths`), settings
(load, merge, expand, validate; :mod:`.settings`) and the table of their keys (:mod:`.keys`; a value
checked by its model's field: :mod:`.fieldcheck`), assembled from the sections each feature
registers (:mod:`.sections`; what the run time reads of their models, generated: :mod:`.keytable`,
written by :mod:`.tablegen`; the list of those modules is ``core.sectionlist``, above the features;
the model's keys: :mod:`.modelsection`; the MCP client's: :mod:`.mcpsection`), where a key is in a
file (:mod:`.locate`), server entries (:mod:`.servers`, :mod:`.oauth`, :mod:`.provenance`), editing
them (:mod:`.serveredit`), trust for project settings (:mod:`.trust`, :mod:`.runfiles`,
:mod:`.trustwatch`), the administrator's managed settings (:mod:`.managed`), both applied once
(:mod:`.effective`), other clients' configurations (:mod:`.importers`; what they share with settings
loading, Claude Code's entry among it: :mod:`.translate`), Claude Code's settings files
(:mod:`.claudefiles`), definition files (:mod:`.definitions`, :mod:`.discovery` for where the
project is, :mod:`.modelnames`), Claude Code plugins as settings read them (:mod:`.plugins`),
project notes (:mod:`.notes`, :mod:`.initnotes`), writing a project file (:mod:`.projectfiles`), and
hooks' wire contract (:mod:`.hookcontract`).

The packages above the kernel's ``config`` own their settings sections
(``core.checkpoints.checkpointing``, ``core.telemetry.exportsettings``,
``core.media.imagelimits``, ``core.hooks.hooksection``, ``core.sandbox.sandboxsettings``); a
key whose files combine by rules of their own (``sandbox``) registers a combiner the loader
and the managed policy ask, and ``hooks``, whose entries the kernel reads, an entry combiner
the loader and trust ask (:mod:`.combining`). What the kernel itself reads stays here:
:mod:`.sandboxing` (the sandbox's grammar: a server entry carries a sandbox, Claude Code's
files name hosts), :mod:`.hooks` (the hook entries' grammar: the loader, Claude Code's files
and plugins read them; the value is the hooks feature's), and :mod:`.skills` (skill
discovery, which the definitions reader shares; not a settings section).

May import: ``core``'s plain helpers, :mod:`core.proc` and :mod:`core.secrets`.
"""
