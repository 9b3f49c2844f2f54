"""conversation.json beside serve.json: users by memory at the same context or not.

A join of two rules' records lives in its report section (.importlinter); pure Python, no torch.
"""

from __future__ import annotations

from mminfer.measures.conversation.conversation import Conversation
from mminfer.measures.serve.serve import Serve


def users_beside(conversation: Conversation, serve: Serve | None):
    """serve.json's users by memory, where both it and the conversation counted them."""
    counted = conversation.shared_prefix.users_copied is not None
    if counted and serve is not None and serve.users.users_by_memory is not None:
        return serve.users
    return None


def same_context(conversation: Conversation, serve: Serve | None) -> str | None:
    """conversation.same_context: serve.json counted its users at this P + N ("same") or at
    another context ("other"); None where either did not count them."""
    users = users_beside(conversation, serve)
    if users is None:
        return None
    shared = conversation.shared_prefix
    return "same" if users.context == shared.prompt_len + shared.new_tokens else "other"
