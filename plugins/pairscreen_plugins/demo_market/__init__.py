"""The synthetic demo market: its catalogue, random streams and factor model.

Shared by the ``demo`` market source and the ``demo`` peg reference source, which are the
plugins; this package registers nothing itself.
"""
