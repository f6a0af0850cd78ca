"""``codebot mcp ...``: the group (:mod:`.group`: ``list``, ``call``, and registering the
rest) and one module per command or family of commands.

May import what :mod:`cli.commands` may.
"""
