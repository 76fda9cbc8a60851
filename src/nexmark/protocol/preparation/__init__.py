"""Preparing a run, before any query: what it was asked (`options`) and whether the engine can
do it (`checks`), every job's setup resolved (`plan`), the dataset as the protocol sees it
(`parts`, `rate_layout`) and where it lives (`store`, `kafka`), the plan printed and the disk it
needs (`run_plan`), and the results directory's guards: one run at a time (`runlock`), a resumed
run of the same setup only (`resume`), a killed run's leftovers cleaned up (`leftovers`).
`prepare.prepare_run` ties them together for every command that runs queries."""
