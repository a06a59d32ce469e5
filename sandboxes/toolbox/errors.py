"""The two kinds of failure a toolbox method reports on purpose (anything else is `Internal`)."""


class ToolError(Exception):
    """A problem the model should see and can fix (file not found, old_str not unique, ...)."""


class BadRequest(Exception):
    """A malformed request: unknown method, or a missing or invalid parameter."""
