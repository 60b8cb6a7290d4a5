"""``python -m stealsearch ...`` is the ``stealsearch`` command."""
import sys

from .cli import main

sys.exit(main())
