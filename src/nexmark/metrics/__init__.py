"""Measurements: sampling a running job, deriving the scored metrics, describing the machine."""
