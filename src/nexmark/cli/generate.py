"""`nexmark generate` and `nexmark dataset verify` (being written)."""
