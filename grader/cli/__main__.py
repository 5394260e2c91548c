"""`python -m grader.cli`: the same as the `meteor-kit` command."""

import sys

from grader.cli.main import main

sys.exit(main())
