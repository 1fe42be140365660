"""academiceval rounds as lm-evaluation-harness tasks (`pip install academiceval[lmeval]`).

    academiceval export --format lm-eval demo lm-eval-tasks/
    lm_eval --model local-chat-completions --model_args base_url=http://127.0.0.1:8000/v1/chat/completions,model=M \\
        --include_path lm-eval-tasks --tasks academiceval_demo --apply_chat_template --log_samples --output_path out
    academiceval lm-eval import out          # lm-eval's samples as an academiceval run; then score / report

- `export`: one task YAML per config of the round (task = the config, tags `academiceval_<round>` and
  `academiceval_<round>_<task>`), the docs as JSONL (`data/`), and a small `utils.py` that hands lm-eval our
  loader and scorer (`harness`). The prompt of each doc is what `academiceval run` sends for it (the runner's
  `PromptPreparer`; its sha256 checked against the round's `prompt_sha256`), the generation options the
  runner's per-task defaults (max new tokens, greedy).
- `harness`: what lm-eval calls — `load_docs` (custom_dataset) and `process_results`, which scores an answer
  with the registry metric exactly as `academiceval score` does (`integrations.scoring`).
- `samples`: lm-eval's `--log_samples` output → an academiceval run directory (`academiceval lm-eval import`).

lm-eval is imported by none of these modules; `harness` needs `datasets` (an lm-eval dependency).
"""
