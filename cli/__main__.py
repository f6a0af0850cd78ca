"""``python -m cli``."""

from codebot_mcp.cli.app import main

main()
