"""Capture: which lines of a conversation become memories (raw turns, trigger sentences, or an LLM's facts)."""
