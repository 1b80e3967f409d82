"""`python -m engine` is the `apollo` command."""

import sys

from engine.cli import main

sys.exit(main())
