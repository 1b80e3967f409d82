"""`python -m engine` is the `apollo` command."""

import sys

from engine.cli.main import main

sys.exit(main())
