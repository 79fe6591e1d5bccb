"""The request-body engine the payload and diff pages stand on: build, window, highlight, compare, digest."""
