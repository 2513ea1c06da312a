"""Domain services: accounts, quota, screen, snapshot, peg, watchlist. No HTTP here."""
