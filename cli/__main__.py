"""``python -m cli``."""

from cli.app import main

main()
