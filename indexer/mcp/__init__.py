"""MCP: the memory's tools and notes for MCP clients, over stdio here and over HTTP inside the daemon."""
