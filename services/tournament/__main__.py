"""``python -m tournament``: run the tournament service."""

from tournament.server import main

main()
