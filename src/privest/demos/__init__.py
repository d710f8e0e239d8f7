"""Sections of ``privest demo``, one module per method (see :mod:`privest.demo`)."""
