"""Uploading trace files into the store, with the rules and the lines of `traceloupe import`."""
