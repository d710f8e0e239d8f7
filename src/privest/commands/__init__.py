"""Subcommands of ``privest`` kept in their own modules.

Each module defines ``add_parser(sub)``, which adds its subparser to the ``privest``
command and sets ``func(args, console)`` as the handler (see :mod:`privest.cli`).
"""
