"""Fidelity summary of reproduction runs: every cell, ours beside the paper's, in SE units.

``python -m privest.experiments.fidelity DIR [-o FILE.md]`` reads the tables that
``privest reproduce NAME --output DIR`` wrote (``DIR/NAME.csv``) and writes one Markdown
table per experiment: each cell with the paper's number (setting, n, method, parameter,
ours, paper, Monte Carlo SE, the gap in SE units, within 3 SE or not), then a count per
(setting, n, method) group and the run's notes (fits on the parameter box, convergence),
so that what docs/dr-estimation.md claims about a full run can be checked against it.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

__all__ = ["fidelity_table", "main"]


def _gap(row: pd.Series) -> float:
    se = row["mc_se"]
    if pd.isna(row["paper"]) or pd.isna(se) or se <= 0:
        return math.nan
    return (row["ours"] - row["paper"]) / se


def fidelity_table(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cells, groups): the cells with a paper number and their gap in MC SE; per
    (setting, n, method) the number of cells, how many are within 3 SE, and the largest gap."""
    cells = table[table["paper"].notna()].copy()
    cells["gap_se"] = cells.apply(_gap, axis=1)
    cells["within_3se"] = cells["gap_se"].abs() <= 3.0
    groups = (
        cells.groupby(["setting", "n", "method"], sort=False)
        .agg(
            cells=("ours", "size"),
            within_3se=("within_3se", "sum"),
            max_abs_gap_se=("gap_se", lambda g: float(g.abs().max())),
            note=("note", "first"),
        )
        .reset_index()
    )
    return cells, groups


def _markdown(df: pd.DataFrame, floats: dict[str, str]) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        out = []
        for c in cols:
            v = r[c]
            if c in floats and isinstance(v, float):
                out.append("" if math.isnan(v) else format(v, floats[c]))
            else:
                out.append("" if pd.isna(v) else str(v))
        lines.append("| " + " | ".join(out).replace("\n", " ") + " |")
    return "\n".join(lines)


def summarise(folder: str | Path) -> str:
    """The Markdown summary of every ``*.csv`` in ``folder``."""
    parts = []
    for path in sorted(Path(folder).glob("*.csv")):
        table = pd.read_csv(path)
        if not {"ours", "paper", "mc_se"} <= set(table.columns):
            continue
        if "n" in table.columns:  # sample sizes print as integers (CSV reads them as floats)
            table["n"] = table["n"].astype("Int64")
        cells, groups = fidelity_table(table)
        fmt = {"ours": ".4f", "paper": ".3f", "mc_se": ".4f", "gap_se": "+.1f"}
        parts += [
            f"## {path.stem}",
            "",
            f"{int(cells['within_3se'].sum())} of {len(cells)} cells with a paper number are "
            "within 3 Monte Carlo SE.",
            "",
            _markdown(groups, {"max_abs_gap_se": ".1f"}),
            "",
            _markdown(
                cells[
                    ["setting", "n", "method", "parameter", "ours", "paper", "mc_se"]
                    + ["gap_se", "within_3se"]
                ],
                fmt,
            ),
            "",
        ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the output folder of privest reproduce")
    parser.add_argument("-o", "--output", help="Markdown file (default: print)")
    args = parser.parse_args(argv)
    text = summarise(args.folder)
    if args.output:
        Path(args.output).write_text(text)
    else:
        print(text)


if __name__ == "__main__":  # pragma: no cover
    main()
