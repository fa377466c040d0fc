"""``python -m mae``: the command line."""

from mae.cli import main

raise SystemExit(main())
