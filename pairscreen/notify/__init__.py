"""Watchlists, delivery channels, the state machine and the notification outbox."""
