"""Allow `python -m langgraph_context`."""

import sys

from langgraph_context.cli import main

sys.exit(main())
