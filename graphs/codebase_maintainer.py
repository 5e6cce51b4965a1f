"""The long-horizon codebase maintainer, ready for `langgraph dev`.

The workspace is the directory in `LGC_WORKSPACE` (default: the server's working
directory); the terminal is read-only and confined to it. The model comes from each
run's `context` or `configurable` settings (`ContextSettings`, see
`graphs/context_agent.py`). Notes live in the server's store
under `("codebase_maintainer", "notes", <user_id>)`, so every thread of a user continues
from the same notes and no user reads another's; a run without
`user_id` (in `context` or `configurable`) is refused before the model is called. Pass
`{"mode": "explore" | "analyze" | "plan" | "auto"}` with a run's input to switch modes.
"""

import os

from langgraph_context.agents import (
    OutputGuardMiddleware,
    create_codebase_maintainer_graph,
)
from langgraph_context.cli.models import resolve_chat_model
from langgraph_context.providers import ContextSettings

WORKSPACE_ENV_VAR = "LGC_WORKSPACE"

graph = create_codebase_maintainer_graph(
    resolve_chat_model,
    workspace=os.environ.get(WORKSPACE_ENV_VAR) or os.getcwd(),
    note_namespace=("codebase_maintainer", "notes", "{user_id}"),
    context_schema=ContextSettings,
    middleware=[OutputGuardMiddleware()],  # flagged answers recorded in `injection_flags`
    name="codebase_maintainer",
)
