"""The stored message format: the BaseMessage family, parts, helper objects and the Message union."""
