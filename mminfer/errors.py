"""The one exception type the workflow turns into a clear, one-paragraph error."""


class MminferError(Exception):
    """Bad input or a failed check, explained for the user (no traceback needed)."""
