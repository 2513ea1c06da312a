"""Market data: candles synced from the universe's source and held in memory."""
