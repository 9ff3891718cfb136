"""``python -m wallet``: run the wallet / rake service."""

from wallet.server import main

main()
