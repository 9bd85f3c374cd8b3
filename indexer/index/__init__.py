"""The index: the SQLite binding with sqlite-vec, all SQL, and the store handles."""
