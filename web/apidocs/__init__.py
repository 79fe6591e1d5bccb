"""The API page: the JSON API read from the app's own OpenAPI document, rendered on the server (no script, no CDN)."""
