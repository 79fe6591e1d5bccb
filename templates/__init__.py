"""The page templates: ``web.templates`` in an installed wheel (package-dir in pyproject.toml maps it here)."""
