"""The tournament service: ``cardroom.v1.Tournament`` over the rules core's ``Tournament``
(issue 15). See :mod:`tournament.house` (every tournament), :mod:`tournament.runner` (one),
:mod:`tournament.tables` (the port to the tables) and :mod:`tournament.money` (the wallet)."""
