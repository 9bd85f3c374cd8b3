"""One memory at a time: add, read back, correct, forget, supersede, import; what each use counts."""
