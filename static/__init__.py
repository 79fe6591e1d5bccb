"""The static assets: ``web.static`` in an installed wheel (package-dir in pyproject.toml maps it here)."""
