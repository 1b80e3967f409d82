"""The `apollo` command line: one module per command group, registered in one list."""
