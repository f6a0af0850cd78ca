"""Configuration: where codebot keeps its files (:mod:`.paths`), settings (load, merge,
expand, validate; :mod:`.settings`) and the table of their keys (:mod:`.keys`), assembled
from the sections each feature registers (:mod:`.sections`; the list of those features:
:mod:`.sectionlist`; the model's keys: :mod:`.modelsection`; the MCP client's:
:mod:`.mcpsection`), server entries (:mod:`.servers`, :mod:`.oauth`), editing them
(:mod:`.edit`), trust for project settings (:mod:`.trust`), the administrator's managed
settings (:mod:`.managed`), both applied once (:mod:`.effective`), other clients'
configurations (:mod:`.importers`), front matter of definition files (:mod:`.frontmatter`),
local skill folders (:mod:`.skills`), project notes (:mod:`.notes`), a first ``AGENTS.md``
(:mod:`.initnotes`) and the ``images`` limits (:mod:`.imagelimits`).

May import: ``core``'s plain helpers, :mod:`core.proc` and :mod:`core.secrets`.
"""
