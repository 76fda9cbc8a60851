"""The `nexmark` command line: thin commands over the library."""
