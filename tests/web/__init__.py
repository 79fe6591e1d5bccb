"""Tests of the dashboard: the app, its security, the timeline view model, the browser flows."""
