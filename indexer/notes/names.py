"""The names a user may pass: memory types and import formats (no parsing code, so the thin client stays light)."""

MEMORY_TYPES = ("preference", "fact", "instruction", "decision", "entity", "episodic")
GLOBAL_TYPES = ("preference", "fact", "instruction", "entity")  # kept in the user's store, not the project's
IMPORT_FORMATS = ("sillytavern-chat", "sillytavern-lorebook", "sillytavern-card", "mem0")
