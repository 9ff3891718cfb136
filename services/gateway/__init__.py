"""The gateway: the only client-facing service (login, lobby, join/leave, balance, Play)."""
