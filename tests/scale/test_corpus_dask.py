"""The Dask cases of the hostile corpus (issue 30; tests/corpus/test_corpus.py): ``--engine
dask`` on bad Parquet, and Dask arrays and Series with NaN, complex, object and text
values. Collected only with the Dask extra (tests/scale/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus.cases_dask import dask_cases, warm_up_dask, write_parquet
from corpus.harness import Case, judge

PLACEHOLDER = Path("/corpus-parquet")
CASES = {case.name: case for case in dask_cases(PLACEHOLDER, write=False)}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus") / "dask"
    warm_up_dask(write_parquet(folder))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_dask_case(name, inputs):
    case = CASES[name]
    if case.argv is not None:
        swap = lambda text: str(text).replace(str(PLACEHOLDER), str(inputs))  # noqa: E731
        case = Case(case.name, case.expect, argv=[swap(a) for a in case.argv])
    outcome, detail = judge(case)
    assert outcome == "ok", f"{outcome}: {detail}"
