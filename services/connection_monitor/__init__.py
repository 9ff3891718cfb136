"""The connection monitor: player heartbeats, connection events, artificial all-in allowance."""
