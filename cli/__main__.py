"""``python -m cli``."""

from codebot_mcp.cli.entry import main

main()
