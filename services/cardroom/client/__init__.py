"""The client side of Cardroom, used by the CLI (``cardroom play``, ``cardroom bots``): an async
gateway connection, a table view kept from the Play stream, the terminal UI and bot players.
It talks to the gateway only (players with login tokens, the bots' set-up through the
gateway's operator API); the gateway service itself ships none of this."""
