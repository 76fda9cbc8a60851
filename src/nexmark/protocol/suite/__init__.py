"""The suite driver: the named suites (`suites`), the source ceiling measured before the
queries (`calibrate`), and `runner.run_suite`, which runs the queries one after another with
the engine's lifecycle, failure isolation, resume and Ctrl-C, appending each result."""
