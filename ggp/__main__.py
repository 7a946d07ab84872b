"""``python -m ggp``: the same as the ``ggp`` console script."""

import sys

from ggp.cli import main

sys.exit(main())
