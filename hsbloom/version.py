"""The single source of hsbloom's version (read by pyproject.toml and jvm/build.sbt)."""

__version__ = "0.1.0"
