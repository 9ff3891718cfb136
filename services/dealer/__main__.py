"""``python -m dealer``: run the dealer service."""

from dealer.server import main

main()
