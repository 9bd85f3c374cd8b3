"""The `mdmem` command line: commands, rendering and the MCP server. Nothing imports it."""
