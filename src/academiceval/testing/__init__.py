"""Helpers for tests and benchmarks, not used by the pipeline: a small real round written straight from the
corpus sample (`sample_round`) and deterministic real text pairs for metric parity checks (`pairs`)."""
