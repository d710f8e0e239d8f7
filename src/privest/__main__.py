"""``python -m privest``: the ``privest`` command."""

import sys

from privest.cli import main

if __name__ == "__main__":
    sys.exit(main())
