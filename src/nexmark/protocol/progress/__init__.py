"""What a run shows while it works: a bar per phase, the phase and checkpoint events, plain log
lines where there is no terminal (`display`), and the suite's line, query k of n with an estimate
of what remains (`suite_progress`). The phases and the suite both write to it; it imports
nothing else of the protocol."""
