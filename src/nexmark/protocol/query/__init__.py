"""One query through the phases of docs/protocol.md: the loop of runs, warm-ups and repeats or
trials (`query_run`), the phases' state machine (`phases`), one timed phase (`timed`) and a
query's own steps in it (`phase_steps`), the clock it waits on (`waits`, `polling`), the proofs
its figures depend on (`proofs`), a failover as it happens and what it was (`failover_watch`,
`failover`), the profiler around the scored repeats (`profiled`), and what every phase observed
(`observe`), which the scoring reads."""
