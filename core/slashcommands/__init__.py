"""Custom slash commands: prompt templates the user types as ``/name arguments``.

Modules: :mod:`.templates` (finding the definition files, expanding a command's template
with its arguments, files and shell output, and what it grants).

A feature over the kernel (definition files, the gate, the loop); no other feature.
"""
