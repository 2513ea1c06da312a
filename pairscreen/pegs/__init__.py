"""Peg monitoring: reference samples, the depeg detector, each asset's peg status."""
