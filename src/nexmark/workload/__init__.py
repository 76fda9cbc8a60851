"""The workload: the deterministic Nexmark events, the datasets on disk and the queries."""
