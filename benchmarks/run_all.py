"""Run every benchmark in this folder (``make bench``) and print their reports."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def main() -> None:
    here = Path(__file__).parent
    for path in sorted(here.glob("bench_*.py")):
        print(f"\n=== {path.stem} ===", flush=True)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.main([])


if __name__ == "__main__":
    sys.exit(main())
