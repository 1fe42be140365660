"""Fuzzing the importers' one reader of users' JSON rows (`store.user_rows`) and the importers built on it
(SCALAR questions, L-Eval task and prediction files, ElaipBench rows) with hypothesis: any bytes, or a real row
mutated, gives rows and described bad rows — never an exception (the file-level ValueError the ElaipBench and
prediction readers raise for a file with nothing readable is their documented answer)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from academiceval.families.cloze.importer import read_scalar_questions
from academiceval.families.elaip.items import read_file as read_elaip
from academiceval.families.leval.items import read_task_file
from academiceval.families.leval.scoring import read_prediction_file
from academiceval.store.user_rows import read_json_rows

from .catalogue.rows import ROW_DAMAGE, damaged_rows, json_list, jsonl

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
NASTY = st.sampled_from([b"\xff\xfe", b"\x00", b"\\ud800", b"[" * 3000, b"NaN", b"\r", b"\xef\xbb\xbf", b'"', b"}"])


def _check(path: Path) -> None:
    rows, bad = read_json_rows(path)
    for row, where in rows:
        assert isinstance(row, dict) and where.startswith(str(path))
        json.dumps(row, ensure_ascii=False).encode("utf-8")  # text all the way down
    assert all(b.where.startswith(str(path)) and b.reason for b in bad)


@FUZZ
@given(data=st.binary(max_size=2000))
def test_any_bytes_are_rows_or_described_bad_rows(data: bytes, tmp_path: Path) -> None:
    p = tmp_path / "rows.jsonl"
    p.write_bytes(data)
    _check(p)


@FUZZ
@given(rows=st.lists(JSON, max_size=5), splice=st.lists(st.tuples(st.integers(0, 4000), NASTY), max_size=3))
def test_json_values_with_nasty_bytes_spliced_in(rows: list, splice: list, tmp_path: Path) -> None:
    for form, write in (("jsonl", jsonl), ("json", json_list)):
        data = write(rows)
        for at, nasty in splice:
            data = data[:at] + nasty + data[at:]
        p = tmp_path / f"rows.{form}"
        p.write_bytes(data)
        _check(p)


@pytest.fixture(scope="module")
def real_rows(corpus: Path) -> dict[str, list[dict]]:
    from .catalogue.inputs import LEVAL_TASK, PREDICTIONS, SCALAR_EASY, _lines, elaip_rows

    return {
        "scalar": [json.loads(f.read_bytes()) for f in sorted((corpus / SCALAR_EASY).glob("*.json"))[:2]],
        "leval": _lines(corpus / LEVAL_TASK, 2),
        "pred": _lines(corpus / PREDICTIONS, 3),
        "elaip": elaip_rows(corpus),
    }


@FUZZ
@given(damage=st.sampled_from(sorted(ROW_DAMAGE)), field_value=JSON, form=st.sampled_from(["jsonl", "json"]))
def test_importers_on_real_rows_with_one_damaged(
    damage: str, field_value: object, form: str, real_rows: dict[str, list[dict]], tmp_path: Path
) -> None:
    write = jsonl if form == "jsonl" else json_list
    for kind, good in real_rows.items():
        rows = damaged_rows(good, damage)
        rows.insert(0, {k: field_value for k in good[0]})  # and one row of any JSON in every field
        d = tmp_path / kind / "easy"
        d.mkdir(parents=True, exist_ok=True)
        p = d / f"tpo.{form}l" if form == "jsonl" else d / "tpo.json"
        p.write_bytes(write(rows))
        if kind == "scalar":
            rep = read_scalar_questions([p], level="easy")
            assert sum(rep.problems.values()) >= 1
        elif kind == "leval":
            problems: list = []
            read_task_file(p, problems=problems)
        elif kind == "pred":
            try:
                read_prediction_file(p)
            except ValueError as e:
                assert str(p) in str(e)
        else:
            with contextlib.suppress(ValueError):  # a file with nothing readable: one ValueError naming it
                read_elaip(p)
