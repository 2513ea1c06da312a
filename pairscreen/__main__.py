"""``python -m pairscreen`` runs the command line."""

from pairscreen.cli import main

raise SystemExit(main())
