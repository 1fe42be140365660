"""L-Eval (long-document QA) as a task family: its task files as a round, its prompts and truncation."""
