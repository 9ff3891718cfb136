"""Client side of the gateway: an async connection, a table view, bot players (for the CLI)."""
