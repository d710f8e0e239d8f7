"""Issue 30, item 8: an id is canonical whatever its spelling (privest.release.ids).

Through the library and the command line, in a store of int ids and in a store of text
ids, every spelling of a released id is refused; a count of the spellings tried is kept.
Two processes appending the same ids under different spellings: exactly one succeeds."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main
from privest.release.ids import canonical_ids

pytestmark = pytest.mark.filterwarnings("ignore::privest.errors.SeededRandomnessWarning")

#: spellings of the id 7 as text (a CSV cell, a str column)
TEXT_SEVENS = ["7", "07", "007", "7.0", "7.", "+7", " 7 ", "+07.00", "7e0", "0.7e1", "70e-1",
               "７", "٧", "\t7\n"]  # fmt: skip
#: spellings of 7 as Python or numpy numbers
NUMBER_SEVENS = [7, 7.0, np.int8(7), np.uint64(7), np.float32(7.0), np.int64(7)]
MECH = pv.ZILMechanism(0.4, 0.1, {"a": (0.0, 1.0)})


def _rows(n: int) -> pd.DataFrame:
    return pd.DataFrame({"a": np.full(n, 0.5)})


def test_every_spelling_is_one_canonical_id():
    for spelling in TEXT_SEVENS:
        assert canonical_ids([spelling], 1)[0].tolist() == [7], repr(spelling)
        assert canonical_ids([spelling, "x"], 2)[0].tolist() == ["7", "x"], repr(spelling)
    for number in NUMBER_SEVENS:
        assert canonical_ids(np.array([number]), 1)[0].tolist() == [7]
    assert canonical_ids(np.array([7, "x"], dtype=object), 2)[0].tolist() == ["7", "x"]
    assert canonical_ids(pd.Series(["07", "8"], dtype="str"), 2)[0].tolist() == [7, 8]
    # other text is opaque: case, inner zeros and letters count
    assert canonical_ids(["A7", "a7", "A07"], 3)[0].tolist() == ["A7", "a7", "A07"]


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["7", "07"], "duplicates"),
        (["7", "+7.0", "x"], "duplicates"),
        (["7.5"], "whole"),
        ([7.5], "whole"),
        (["1e30"], "below 2"),
        (["9223372036854775808"], "below 2"),
        (np.array([2**63], dtype=np.uint64), "below 2"),
        ([2.0**60], "2\\^53"),
        (["", "x"], "missing"),
        (["  ", "x"], "missing"),
        ([None, "x"], "missing"),
        ([np.nan, 1.0], "missing"),
        (np.array([True, False]), "booleans"),
    ],
)
def test_bad_ids_are_refused_without_quoting_them(ids, message):
    with pytest.raises(pv.ValidationError, match=message) as err:
        canonical_ids(ids, len(ids))
    assert "9223372036854775808" not in str(err.value) and "7.5" not in str(err.value)


def test_a_released_id_is_refused_in_every_spelling_through_the_library(tmp_path):
    """Text-id store (7 stored as "7" beside "x"), int-id store (7 stored as 7)."""
    text_store, int_store = tmp_path / "text", tmp_path / "int"
    MECH.release(_rows(2), ids=["7", "x"]).save(text_store)
    MECH.release(_rows(1), ids=[7]).save(int_store)
    tried = 0
    for k, spelling in enumerate(TEXT_SEVENS):
        batch = MECH.release(_rows(2), ids=[spelling, f"new{k}"])  # a text batch
        with pytest.raises(pv.DuplicateRecordError, match="e.g. id '7'"):
            batch.save(text_store, append=True)
        alone = MECH.release(_rows(1), ids=[spelling])  # an int batch
        with pytest.raises(pv.DuplicateRecordError, match="e.g. id '7'"):
            alone.save(int_store, append=True)
        tried += 2
    for number in NUMBER_SEVENS:
        with pytest.raises(pv.DuplicateRecordError):
            MECH.release(_rows(1), ids=np.array([number])).save(int_store, append=True)
        tried += 1
    assert tried == 2 * len(TEXT_SEVENS) + len(NUMBER_SEVENS) == 34
    assert pv.load_release(text_store).n == 2 and pv.load_release(int_store).n == 1
    MECH.release(_rows(1), ids=["8"]).save(int_store, append=True)  # control: a new id
    assert pv.load_release(int_store).n == 2


def test_a_released_id_is_refused_in_every_spelling_through_the_cli(tmp_path, capsys):
    """The issue's attack: one record released four times through `privest release`."""
    store = tmp_path / "s"
    args = ["--bounds", "a=0:1", "--lam", "0.4", "--zero-prob", "0.1"]
    pd.DataFrame({"id": ["7", "x"], "a": [0.5, 0.5]}).to_csv(tmp_path / "d.csv", index=False)
    assert (
        main(["release", str(tmp_path / "d.csv"), *args, "--id-column", "id", "-o", str(store)])
        == 0
    )
    capsys.readouterr()
    refused = 0
    for k, spelling in enumerate(TEXT_SEVENS):
        if spelling != spelling.strip():  # CSV cells: the white-space forms are tested above
            continue
        csv = tmp_path / f"more{k}.csv"
        pd.DataFrame({"id": [spelling, f"y{k}"], "a": [0.5, 0.5]}).to_csv(csv, index=False)
        argv = ["release", str(csv), "--append", "--id-column", "id", "-o", str(store)]
        assert main(argv) == 1, spelling
        assert "already released" in capsys.readouterr().err
        refused += 1
    assert refused == 12
    assert pv.load_release(store).n == 2


WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np, pandas as pd
    import privest as pv
    store, form = sys.argv[1], sys.argv[2]
    ids = [form.format(i) for i in range(2000)] + ["t" + str(i) for i in range(10)]
    mech = pv.ZILMechanism(0.4, 0.1, {"a": (0.0, 1.0)})
    rel = mech.release(pd.DataFrame({"a": np.full(len(ids), 0.5)}), ids=ids)
    try:
        rel.save(store, append=True)
    except pv.DuplicateRecordError:
        sys.exit(3)
    """
)


@pytest.mark.slow
def test_two_processes_with_two_spellings_of_the_same_ids_one_succeeds(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(WRITER)
    for trial, forms in enumerate([("{}", "0{}"), ("+{}", "{}.0"), ("{}.", "00{}")]):
        store = tmp_path / f"s{trial}"
        MECH.release(_rows(1), ids=["seed"]).save(store)
        procs = [
            subprocess.Popen([sys.executable, str(script), str(store), f], stderr=subprocess.PIPE)
            for f in forms
        ]
        codes = sorted(p.wait(timeout=300) for p in procs)
        assert codes == [0, 3], [p.stderr.read().decode()[-400:] for p in procs]
        assert pv.load_release(store).n == 1 + 2010
