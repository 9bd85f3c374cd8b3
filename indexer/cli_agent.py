"""Command-line commands for cli_agent (registered by cli.py)."""

COMMANDS: list = []
