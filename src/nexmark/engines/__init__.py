"""Engines: one package each, all behind the small interface of `nexmark.engines.base`."""
