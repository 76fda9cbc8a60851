"""The two-phase protocol: warm-up, phase checkpoint, restore, scored benchmark phase."""
