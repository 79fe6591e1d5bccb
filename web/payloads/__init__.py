"""The payload page: the request body each provider would receive, highlighted, with its warnings and phases."""
