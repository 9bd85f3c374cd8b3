"""Model providers behind one list: each name maps to "module:Class", imported only when chosen."""
