"""``python -m pairscan`` runs the command line."""

from pairscan.cli import main

raise SystemExit(main())
