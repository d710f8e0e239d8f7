"""The version of privest, in one place (read by pyproject.toml, ``privest.__version__``
and ``privest --version``)."""

__version__ = "0.2.0"
