"""`python -m minibroker` is the `minibroker` command."""

import gc
import sys

# Importing the command line and the core creates some 40,000 objects the cyclic collector tracks, which live as
# long as the process: it would walk them some 50 times while they load (16 ms of a broker's start). It waits until
# they are loaded, then leaves them out of its walks for good (gc.freeze).
gc.disable()
from .cli import main  # noqa: E402

gc.freeze()
gc.enable()

sys.exit(main())
