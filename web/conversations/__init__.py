"""The conversation list (search, filters, pages) and one conversation's page, and both as JSON."""
