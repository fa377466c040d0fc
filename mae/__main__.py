"""``python -m mae`` (and the ``mae`` console script, ``mae.cli:main``): the command line."""

from mae.cli import main

raise SystemExit(main())
