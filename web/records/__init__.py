"""One card field read whole, and one masked secret revealed: what a card asks for on a click."""
