"""The ``cardroom`` console command."""
