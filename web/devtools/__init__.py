"""Tools for the demo and the tests, never imported by the app: the demo data set and the stub provider."""
