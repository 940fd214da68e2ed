"""`python -m ocrkit`: the `ocrkit` command."""

import sys

from ocrkit.cli import main

sys.exit(main())
