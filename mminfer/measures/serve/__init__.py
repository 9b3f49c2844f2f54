"""The rule `serve`: serve.json: decode steps per batch size, users by speed and by memory."""
