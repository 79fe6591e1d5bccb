"""Replay: send a conversation's request through a provider's SDK and record what happened as a Run.

Imports of the SDKs happen inside the send, so ``import core`` stays fast.
"""
