"""Applications built on a run: the suite runner, batch, the coding backend, the MCP server."""
