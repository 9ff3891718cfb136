"""Cardroom: an open online poker card room.

``cardroom.core`` is the pure rules core (no I/O, no clock, no hidden randomness);
``cardroom.cli`` is the ``cardroom`` console command; ``cardroom.v1`` is the protobuf
code generated from ``protos/cardroom/v1`` by ``make protos``.
"""

__version__ = "0.1.0"
