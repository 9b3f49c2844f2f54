"""The rule `conversation`: conversation.json: a chat's turns with the cache carried or
recomputed."""
