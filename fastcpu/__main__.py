"""Run fastcpu's command line: ``python -m fastcpu``."""

import sys

from ._cli import main

sys.exit(main())
