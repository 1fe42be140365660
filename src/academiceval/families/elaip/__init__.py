"""ElaipBench-format multiple-choice questions as a task family: import, retrieval settings, generation."""
