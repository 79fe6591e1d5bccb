"""Replays in the dashboard: the service that runs them off the request thread, and their view models."""
