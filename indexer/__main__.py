"""`python -m indexer` runs the mdmem command line."""

from .cli import main

main()
