"""Subcommands of ``cardroom``: every module here defines ``register(subparsers)``.

A module registers one (or a few) subcommands with ``argparse`` and sets ``func`` on its
parser; ``func(args) -> int`` returns the exit status. Modules are discovered, so adding
a subcommand never edits a shared file.
"""
