"""``python -m web.cli``: the same as the ``traceloupe`` console script."""

import sys

from web.cli import main

sys.exit(main())
