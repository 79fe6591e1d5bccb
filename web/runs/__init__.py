"""Replays in the dashboard: start, watch, list and compare runs; the service that sends them off the request thread."""
