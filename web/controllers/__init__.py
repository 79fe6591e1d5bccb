"""One controller per area of the dashboard; each stays thin and calls ``core`` or ``web.timeline``."""
