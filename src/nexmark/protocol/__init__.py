"""The two-phase protocol: warm-up, phase checkpoint, restore, scored benchmark phase.

Its subpackages, lowest first (docs/design.md, "Inside `protocol`"): `preparation` (before any
query) and `progress` (what a run shows) < `query` (one query's phases) < `scoring` (their
figures and result) < `suite` (the suite driver)."""
