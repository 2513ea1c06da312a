"""Who may call: accounts, API keys, tiers, the daily quota and the in-flight limit."""
