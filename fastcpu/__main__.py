"""Run fastcpu's command line: ``python -m fastcpu``."""

import sys

from .cli import main


sys.exit(main())
