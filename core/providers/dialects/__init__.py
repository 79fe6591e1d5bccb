"""One translation module per provider dialect; the registry finds each by its ``DIALECT``."""
