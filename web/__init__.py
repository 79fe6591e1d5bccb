"""Traceloupe's web layer: the Litestar dashboard and the command line."""
