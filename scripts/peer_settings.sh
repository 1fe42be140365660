#!/usr/bin/env bash
# Each setting of the ElaipBench and L-Eval papers, run once here on the corpus (issue 29 item 6): the commands of
# the tables in notes/elaip.md and notes/leval.md. The model is the local fake OpenAI-compatible server
# (`--answer-choices`: a letter per prompt and seed), so the numbers show the path, not a model's skill.
# Usage: PYTHONPATH=src bash scripts/peer_settings.sh HOME [PORT]   (HOME: a new, empty workspace)
set -euo pipefail
H=$1; PORT=${2:-8765}; mkdir -p "$H"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false ACADEMICEVAL_HOME=$H OPENAI_API_KEY=x COLUMNS=200
PY=/work/main/.venv/bin/python
AE="$PY -m academiceval.cli.main"
C=${ACADEMICEVAL_CORPUS:-/work/shared/corpus}
M=(--model openai/fake-model --base-url "http://127.0.0.1:$PORT/v1")
T=(--tokenizer bert-base-uncased)  # the fake model has no tokenizer of its own: the packaged WordPiece estimator
FAKE=academiceval.testing.fake_server
$PY -m $FAKE --port "$PORT" --answer-choices >"$H/fake_server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 2

# ElaipBench rows in its schema (elabench.jsonl: no id; paper_content, relevant_passage, question with A-D, answer),
# on a real 16,293-token paper of the corpus; the last MA row has one letter (as two rows of the published file).
$PY - "$H/elabench.jsonl" "$C" <<'PY'
import json, sys
from pathlib import Path
d = json.loads(Path(sys.argv[2], "samples/unarXive_sample/arXiv_src_2212_086.jsonl").read_text().splitlines()[1])
paper = "\n\n".join(p["text"] for p in d["body_text"])
sents = [s for s in paper.split(". ") if len(s.split()) > 8]
golds = [("SA-MCQ", "A"), ("SA-MCQ", "C"), ("MA-MCQ", "AC"), ("MA-MCQ", "B, C, D"), ("SA-MCQ", "D"), ("MA-MCQ", "B")]
rows = [
    {"paper_id": d["paper_id"], "question_type": q, "answer": a, "relevant_passage": sents[3 * i],
     "question": f"Which statements hold? {sents[3 * i][:80]}\n"
     + "\n".join(f"{k}. {sents[3 * i + j][:70]}" for j, k in enumerate("ABCD")),
     "paper_content": paper}
    for i, (q, a) in enumerate(golds)
]
Path(sys.argv[1]).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
PY
echo "== ElaipBench"
for s in full rag-bm25 rag-dense passages-bm25; do
  echo "-- setting $s"
  $AE elaip import "$H/elabench.jsonl" --round eb-$s --setting $s
  $AE run eb-$s "${M[@]}" --preset elaipbench | tail -n 2
  $AE score "$H"/runs/eb-$s/openai__fake-model+elaipbench | grep -E "accuracy|epochs"
done
echo "-- chain of thought (elaipbench-cot)"
$AE run eb-full "${M[@]}" --preset elaipbench-cot | tail -n 2
$AE score "$H"/runs/eb-full/openai__fake-model+elaipbench-cot | grep -E "accuracy|epochs"
$PY - "$H" <<'PY'
import sys
from collections import Counter
from pathlib import Path
from academiceval.store.artifacts import read_epoch_records
recs = read_epoch_records(Path(sys.argv[1], "runs/eb-rag-bm25/openai__fake-model+elaipbench")).values()
calls = Counter(r.sample_id for r in recs)
prompts = {s: {r.prompt_sha256 for r in recs if r.sample_id == s} for s in calls}
print("rag-bm25 records per item:", sorted(set(calls.values())), "epochs:", sorted({r.epoch for r in recs}),
      "prompts per item:", sorted({len(p) for p in prompts.values()}), "(one prompt, 3 seeded calls)")
PY
echo "-- the same round and preset into a new run directory: all 18 answers from the response cache"
$AE run eb-rag-bm25 "${M[@]}" --preset elaipbench --run-name again | grep -E "^requests|elaipbench" || true

echo "== L-Eval"
$AE leval import "$C/leval/LEval-data" --round lv --tasks tpo,financial_qa,news_summ >/dev/null
echo "-- full document (4k budget)"
$AE run lv "${M[@]}" "${T[@]}" --limit 4 --context-length 4096 --run-name full-4k | tail -n 1
echo "-- retrieval: BM25, 4 x 1,024-token chunks of the document, 4k model"
$AE run lv "${M[@]}" "${T[@]}" --limit 4 --rag bm25 --top-k 4 --chunk-size 1024 --chunk-overlap 0 --context-length 4096 \
  --run-name bm25-4k | tail -n 1
echo "-- retrieval: dense (the packaged MiniLM; L-Eval: OpenAI ada embeddings)"
$AE run lv "${M[@]}" "${T[@]}" --limit 4 --rag dense --top-k 4 --chunk-size 1024 --chunk-overlap 0 --context-length 4096 \
  --run-name dense-4k | tail -n 1
for r in full-4k bm25-4k dense-4k; do
  $AE score "$H/runs/lv/$r" | grep -aE "│ openai" || true
done
$PY - "$H" <<'PY'
import sys
from pathlib import Path
from academiceval.store.artifacts import read_run_records
for run in ("full-4k", "bm25-4k", "dense-4k"):
    recs = read_run_records(Path(sys.argv[1], f"runs/lv/{run}"))
    r = recs["leval/financial_qa/0-0"]
    info = r.prompt_info or {}
    print(run, r.sample_id, "input tokens", r.input_tokens, "retrieved",
          [c["chunk_id"] for c in info.get("retrieved", [])], "words cut", info.get("words_cut", 0))
PY
echo "-- L-Eval's judged subsets as rounds"
$AE leval import "$C/leval/LEval-data" --round lv-gpt4 --judge-subset gpt4 >/dev/null
$AE leval import "$C/leval/LEval-data" --round lv-turbo --judge-subset turbo >/dev/null
$PY - "$H" <<'PY'
import sys
from collections import Counter
from pathlib import Path
from academiceval.families.leval.round import load_round
for name in ("lv-gpt4", "lv-turbo"):
    items = load_round(Path(sys.argv[1], "rounds", name))
    print(name, len(items), "items", dict(Counter(i.evaluation for i in items)), len({i.task for i in items}), "tasks")
PY
echo "-- L-Eval's own judge template (the fake judge answers with words of the prompt: a verdict only when its echo of the prompt holds L-Eval's own [[A]]/[[B]]/[[C]])"
P=$C/leval/Predictions/llm_gpt4_eval
$AE judge-predictions "$P/gpt4-32k.pred.jsonl" --against "$P/turbo-16k-0613.pred.jsonl" \
  --judge openai/fake-model --judge-base-url "http://127.0.0.1:$PORT/v1" \
  --judge-template "leval:$C/leval/Evaluation/llm_eval.py" --json | $PY -c '
import json, sys
for f, r in json.load(sys.stdin).items():
    print(f.split("/")[-1], {k: r.get(k) for k in ("judged", "unreadable", "failed", "win_rate", "template", "template_sha256")})'
