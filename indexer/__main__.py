"""`python -m indexer` runs the mdmem command line."""

from indexer.cli.main import main

main()
