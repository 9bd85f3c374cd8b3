"""Command-line commands for cli_daemon (registered by cli.py)."""

COMMANDS: list = []
