"""Suites in the dashboard: save the list's matches as a suite, start suite runs, watch them, read what regressed."""
