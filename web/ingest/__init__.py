"""The live ingest slice: ``POST /v1/traces`` (OTLP/HTTP)."""
