"""The subcommands of ``privest``, one module each.

Each module defines ``add_parser(sub)``, which adds its subparser (with examples in its
``--help``) and sets ``func(args, console)`` as the handler. Helpers shared by the commands
are in :mod:`privest.commands._common`; :mod:`privest.cli` assembles the parser. Modules
here import numpy, pandas, rich and the library only inside their handlers.
"""
