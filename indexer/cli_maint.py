"""Command-line commands for maintenance and verification (registered by cli.py)."""

COMMANDS: list = []
