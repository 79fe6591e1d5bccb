"""Foreign trace formats read into neutral events (``events.py``), from which Traceloupe messages are assembled."""
