"""`python -m minibroker` is the `minibroker` command."""

import sys

from .cli import main

sys.exit(main())
