"""``python -m minigrad.course.grading``: the same as the ``minigrad-grade`` command."""
import sys

from .cli import main

sys.exit(main())
