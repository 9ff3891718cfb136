"""``python -m gateway``: run the client gateway."""

from gateway.server import main

main()
