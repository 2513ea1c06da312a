"""HTTP handlers: thin, one module per resource."""
