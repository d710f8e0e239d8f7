"""Run the whole corpus and print the count per outcome (issue 30's before/after table).

python tests/corpus/tally.py [api|cli|dask ...] [--json FILE]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str]) -> int:
    import tempfile

    from corpus import harness

    out = None
    if "--json" in argv:
        i = argv.index("--json")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    kinds = argv or ["api", "cli", "dask"]
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        if "api" in kinds:
            from corpus.cases_api import api_cases

            cases += api_cases()
        if "cli" in kinds:
            from corpus.cases_cli import cli_cases

            cases += cli_cases(Path(tmp) / "cli")
        if "dask" in kinds:
            from corpus.cases_dask import dask_cases

            cases += dask_cases(Path(tmp) / "dask")
        from corpus.cases_api import warm_up

        warm_up()
        counts, bad = harness.tally(cases)
    print(f"{len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for name, outcome, detail in bad:
        print(f"  {outcome:16s} {name}: {detail}")
    if out:
        Path(out).write_text(json.dumps({"counts": counts, "bad": bad}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
