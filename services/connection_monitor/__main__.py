"""``python -m connection_monitor``: run the connection monitor service."""

from connection_monitor.server import main

main()
