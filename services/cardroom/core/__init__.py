"""The pure rules core: cards, hand evaluation, hand engine, table rules, tournament math.

Nothing in this package performs I/O, reads the clock or draws hidden random numbers:
deck order and time are inputs. Services import the core; the core never imports a service.
"""
