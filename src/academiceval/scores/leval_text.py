"""Answer extraction and per-answer metrics of L-Eval, in two protocols.

`leval-compatible` reproduces what L-Eval's `Evaluation/auto_eval.py`, `em.py` and `f1.py` (OpenLMLab/LEval
commit cd34b05) compute, quirks included, so that numbers can be set beside the L-Eval paper's tables:

- multiple choice: an empty answer becomes "None"; an answer that is a substring of "ABCD" is kept; otherwise
  single-answer tasks take the first A–D character *anywhere* ("Based on …" → "B"); coursera takes a leading run
  of letters, else option-like capitals before the word "Question", else the first run of A–D, else guesses "A";
- exact match does not lower-case (punctuation and English articles removed, spaces collapsed); a gold made only
  of A–D letters scores 1 when equal and 0.25 when the prediction's letters are a subset (coursera's partial
  credit, which also applies to single-answer tasks); other golds compare as floats when both parse, else the
  gold (lower-cased, spaces removed) must be contained in the prediction;
- GSM: digits of the token after "The answer is", else of the last whitespace token with a digit in the first
  paragraph, cut at the first "."; CodeU: L-Eval's output normaliser (it deletes every "is", also inside words);
- sci_fi: lower-cased, split at "[fact:"; the first word containing "true"/"false" on each side.

`strict` keeps the task definitions (same golds, same partial-credit rule) but never guesses: a multiple-choice
answer must name its letters in a recognisable way (a bare letter set, "(B)", "B.", "answer is C", …) or it is
unparsed (scored 0 and counted); GSM compares signed decimal numbers; containment is on normalised whole words.

F1 is SQuAD's token F1 (lower-case, no punctuation, no articles); ROUGE is rouge-score's rouge1/rouge2/rougeL
without stemming — identical in both protocols.
"""

from __future__ import annotations

import re
import string
from collections import Counter

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_OPTION_CAPITAL = re.compile(r"\s*[A-Z](?=[\s.)])")


def _strip_punct(text: str) -> str:
    return "".join(ch for ch in text if ch not in _PUNCT)


def normalize_em(text: str) -> str:
    """L-Eval's `em.normalize_answer`: its docstring says lower-case, its code does not."""
    return " ".join(_ARTICLES.sub(" ", _strip_punct(text)).split())


def normalize_squad(text: str) -> str:
    return " ".join(_ARTICLES.sub(" ", _strip_punct(text.lower())).split())


# ----------------------------------------------------------------------------------------- multiple choice


def gold_choice(gold: str) -> str:
    """First whitespace token of the gold with everything but A–D removed; "A" if nothing is left (L-Eval)."""
    tokens = gold.split()
    letters = re.sub(r"[^A-D]", "", tokens[0]) if tokens else ""
    return letters or "A"


def compat_choice(response: str, *, multi: bool) -> tuple[str, bool]:
    """L-Eval's `process_output_mc`; returns (answer, guessed) where guessed marks the "A" fallback."""
    if not response.strip():
        return "None", False
    if response in "ABCD":
        return response, False
    if not multi:
        for ch in response:
            if ch in "ABCD":
                return ch, False
    lead = ""
    for ch in response:
        if ch not in "ABCD":
            break
        lead += ch
    if len(lead) > 1:
        return "".join(sorted(set(lead))), False
    rest = response[len(lead) :].split("Question")[0]
    found = lead + " ".join(_OPTION_CAPITAL.findall(rest)).strip()
    letters = "".join(sorted(set(re.sub(r"[^A-D]", "", found))))
    if not letters:
        run = ""
        for ch in rest:
            if ch in "ABCD":
                run += ch
            elif run:
                break
        letters = run
    if not letters:
        return "A", True
    return letters, False


_LETTER_LIST = r"\(?[A-D]\)?(?:\s*(?:,|&|and|or)?\s*\(?[A-D]\)?)*"
_STRICT_PATTERNS = (
    re.compile(rf"^\s*\(?({_LETTER_LIST})\)?\s*[.)]?\s*$"),
    re.compile(rf"\b(?:answers?|options?|choices?)\s*(?:is|are|:|-)?\s*:?\s*\(?({_LETTER_LIST})\)?(?![A-Za-z])", re.I),
    re.compile(r"^\s*\(?([A-D])\)?[.):]\s"),
)
_OPTION_LINE = re.compile(r"^\s*\(?([A-D])\)?[.):]\s", re.M)


def strict_choice(response: str, *, multi: bool) -> str | None:
    """Letters the answer names explicitly, sorted; None when it names none (or several for a one-answer task)."""
    for pattern in _STRICT_PATTERNS:
        m = pattern.search(response)
        if m:
            found = m.group(1)
            if pattern is _STRICT_PATTERNS[2]:  # an answer that lists options one per line names them all
                found = "".join(_OPTION_LINE.findall(response))
            letters = "".join(sorted(set(re.findall(r"[A-D]", found))))
            if letters and (multi or len(letters) == 1):
                return letters
            return None
    return None


# ----------------------------------------------------------------------------------------- exact match


def compat_exact_match(prediction: str, gold: str) -> float:
    """L-Eval's `em.exact_match_score` (1, 0.25 or 0)."""
    gold_norm = normalize_em(gold)
    if all(ch in "ABCD" for ch in gold_norm):
        pred_norm = normalize_em(prediction)
        if pred_norm == gold_norm:
            return 1
        if set(pred_norm) <= set(gold_norm):
            return 0.25
        return 0
    try:
        return int(float(prediction) == float(gold))
    except ValueError:
        return int(gold.lower().replace(" ", "") in prediction.lower().replace(" ", ""))


def choice_score(predicted: str | None, gold: str) -> float:
    """Strict multiple-choice score with L-Eval's rule: all letters 1, a non-empty proper subset 0.25, else 0."""
    if not predicted:
        return 0
    if predicted == gold:
        return 1
    return 0.25 if set(predicted) <= set(gold) else 0


_PUNCT_TO_SPACE = str.maketrans({ch: " " for ch in string.punctuation})


def strict_tokens_contained(prediction: str, gold: str) -> int:
    """1 iff the gold's tokens (lower-cased, punctuation as spaces) occur in order and adjacent in the prediction."""
    g = " ".join(gold.lower().translate(_PUNCT_TO_SPACE).split())
    p = " ".join(prediction.lower().translate(_PUNCT_TO_SPACE).split())
    return int(bool(g) and f" {g} " in f" {p} ")


def final_statement(response: str) -> str:
    """What an answer ends with: the text after its last "output" (as in "the final output is …"), else its last
    non-empty line — so a number met while reasoning does not count as the answer."""
    low = response.lower()
    if "output" in low:
        return response[low.rindex("output") + len("output") :]
    lines = [ln for ln in response.splitlines() if ln.strip() and ln.strip() != "```"]
    return lines[-1] if lines else ""


def strict_contains(prediction: str, gold: str) -> int:
    g = normalize_squad(gold)
    return int(bool(g) and f" {g} " in f" {normalize_squad(prediction)} ")


# ----------------------------------------------------------------------------------------- GSM


def compat_math(response: str) -> str:
    """L-Eval's `process_math`: the digits of the answer token, up to its first "."."""
    m = re.search(r"The answer is (\S+)", response)
    if m:
        token = m.group(1)
    else:
        token = ""
        for word in response.split("\n\n")[0].split(" ")[::-1]:
            if any(ch.isdigit() for ch in word):
                token = word
                break
    digits = ""
    for ch in token:
        if ch.isdigit():
            digits += ch
        if ch == ".":
            break
    return digits


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def strict_math(response: str) -> float | None:
    """The signed number after the last "answer is", else the last number in the text."""
    tail = re.split(r"answer is", response, flags=re.I)
    scope = tail[-1] if len(tail) > 1 else response
    numbers = _NUMBER.findall(scope)
    if not numbers:
        return None
    pick = numbers[0] if len(tail) > 1 else numbers[-1]
    try:
        return float(pick.replace(",", ""))
    except ValueError:
        return None


# ----------------------------------------------------------------------------------------- CodeU


def code_gold(response: str) -> str:
    """L-Eval's `process_gt_code`."""
    response = re.sub(r"\s+", " ", response)
    for old, new in ((",", ""), ("'", ""), ("\\", ""), (".0", ""), ("] [", "]["), ("[ [", "[["), ("] ]", "]]")):
        response = response.replace(old, new)
    return response


_CODE_PHRASES = ("will be", "of the code", "is", "would be", "the value of", "the result of", "printed")


def compat_code_output(response: str, gold: str) -> str:
    """L-Eval's `process_output_code`."""
    keep = len(gold.split()) + 3
    response = code_gold(response)
    for phrase in _CODE_PHRASES:
        response = response.replace(phrase, "")
    if "the final output" in response:
        return " ".join(re.split(r"\s+", response.split("the final output")[-1])[:keep])
    return " ".join(re.split(r"\s+", response)[-keep:])


# ----------------------------------------------------------------------------------------- sci_fi


def scifi_gold(gold: str) -> tuple[str, str]:
    """L-Eval's `process_gt_judge`: ("true", "false") from "True [fact: False]" (the last character is dropped)."""
    parts = gold.lower().split("[fact:")
    return parts[0].strip(), parts[1][:-1].strip()


def _first_truth_word(text: str, *, strict: bool) -> str:
    if strict:
        m = re.search(r"\b(true|false)\b", text)
        return m.group(1) if m else "<error>"
    for word in text.split():
        if "true" in word:
            return "true"
        if "false" in word:
            return "false"
    return "<error>"


def scifi_answer(response: str, *, strict: bool = False) -> tuple[str, str]:
    """L-Eval's `process_output_judge`. A prediction without "[fact:" crashes L-Eval; here its fact part is <error>."""
    parts = response.lower().split("[fact:")
    loyalty = parts[0].strip()
    fact = parts[1][:-1].strip() if len(parts) > 1 else ""
    return _first_truth_word(loyalty, strict=strict), _first_truth_word(fact, strict=strict)


# ----------------------------------------------------------------------------------------- F1


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 as in L-Eval's `f1.py` (0 when nothing overlaps)."""
    pred = normalize_squad(prediction).split()
    ref = normalize_squad(gold).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)
