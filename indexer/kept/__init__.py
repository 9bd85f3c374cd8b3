"""Copies of a store's index a serving process keeps in memory beside the file: vectors and common words."""
