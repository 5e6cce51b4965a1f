"""The compared methods, each replayed turn by turn as an agent would run it.

Stateless views (ours rule-based, trim_messages) see the whole history each turn.
langmem keeps its running summary between turns (as its `SummarizationNode` does);
LangChain's `SummarizationMiddleware` rewrites the agent's state, so its next turn
starts from its own previous output plus the new messages. Our node runs in `view`
mode with its state record carried between turns, once with the rule-based facts kept
beside the summary (the default) and once with the prose alone. Every method that
summarizes gets the same deterministic extractive summarizer (`summarizer.py`), asked
for the same summary size; `ContextEditingMiddleware` clears old tool results and
summarizes nothing. Stateful methods are stepped through every model call of a
session (see `replay.py`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, trim_messages

from benchmarks.compaction.summarizer import ExtractiveSummarizer
from langgraph_context.compaction import SummaryOptions, compact_messages, create_compaction_node
from langgraph_context.tokens import default_counter


def shared_summarizer(budget: int) -> ExtractiveSummarizer:
    """The summarizer every summarizing method gets, with the same summary size."""
    return ExtractiveSummarizer(max_tokens=summary_tokens(budget))


def summary_tokens(budget: int) -> int:
    """Summary length asked of the summarizer: 256 tokens, or a quarter of tiny budgets."""
    return max(1, min(256, budget // 4))


class Method:
    """A compaction method replayed over one session at one budget."""

    name = "method"
    last_note = ""  # set by methods that report why a view is over budget
    stateful = False  # carries state between turns: replayed at every model call

    def reset(self, budget: int) -> None:
        """Start a new session at `budget` tokens."""
        self.budget = budget

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        """Return what the model would see for this history (the full history so far)."""
        raise NotImplementedError


class OursRules(Method):
    """`compact_messages`, strategy auto, no model."""

    name = "ours (rules)"

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        result = compact_messages(history, target_tokens=self.budget)
        self.last_note = result.stats.note
        return result.messages


class OursNode(Method):
    """`create_compaction_node(mode="view")` with the shared summarizer, facts kept."""

    name = "ours (node+summary)"
    stateful = True
    keep_facts = True

    def reset(self, budget: int) -> None:
        super().reset(budget)
        options = SummaryOptions(
            max_summary_tokens=summary_tokens(budget), keep_facts=self.keep_facts
        )
        self.node = create_compaction_node(
            trigger_tokens=budget,
            mode="view",
            model=shared_summarizer(budget),
            summary_options=options,
        )
        self.record: dict[str, Any] = {}

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        state: dict[str, Any] = {"messages": history}
        if self.record:
            state["compaction"] = self.record
        out = self.node.invoke(state)
        self.record = out.get("compaction", self.record)
        last = self.record.get("last", {}) if out.get("compaction") else {}
        self.last_note = last.get("note", "")
        return list(out["llm_input_messages"])


class OursNodeRules(OursNode):
    """The same node without a model: rules alone, at the same budgets and low mark."""

    name = "ours (node, rules only)"

    def reset(self, budget: int) -> None:
        Method.reset(self, budget)
        self.node = create_compaction_node(trigger_tokens=budget, mode="view")
        self.record = {}


class OursNodeProse(OursNode):
    """The same node with the summarizer's prose alone (`keep_facts=False`)."""

    name = "ours (node+summary, prose only)"
    keep_facts = False


class ContextEditing(Method):
    """LangChain v1 `ContextEditingMiddleware(edits=[ClearToolUsesEdit(...)])`.

    The edit it applies in `wrap_model_call` (on a copy of the request's messages):
    over `trigger` tokens, old tool results (all but the latest `keep`) become a
    placeholder. It never summarizes or drops a message.
    """

    name = "ContextEditingMiddleware"

    def reset(self, budget: int) -> None:
        super().reset(budget)
        from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

        self.mw = ContextEditingMiddleware(
            edits=[ClearToolUsesEdit(trigger=budget)], token_counter=default_counter()
        )

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        messages = list(history)  # the edit replaces items, never mutates a message
        for edit in self.mw.edits:
            edit.apply(messages, count_tokens=default_counter())
        return messages


class Trim(Method):
    """`trim_messages(strategy="last", include_system=True)` with the same counter."""

    name = "trim_messages"

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        return list(
            trim_messages(
                history,
                max_tokens=self.budget,
                strategy="last",
                token_counter=default_counter(),
                include_system=True,
            )
        )


class Langmem(Method):
    """langmem's `summarize_messages` with its running summary carried between turns."""

    name = "langmem"
    stateful = True

    def reset(self, budget: int) -> None:
        super().reset(budget)
        self.model = shared_summarizer(budget)
        self.running: Any = None

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        from langmem.short_term import summarize_messages as langmem_summarize

        result = langmem_summarize(
            history,
            running_summary=self.running,
            model=self.model,
            max_tokens=self.budget,
            max_tokens_before_summary=self.budget,
            max_summary_tokens=summary_tokens(self.budget),
            token_counter=default_counter(),
        )
        self.running = result.running_summary
        return list(result.messages)


class Middleware(Method):
    """LangChain v1 `SummarizationMiddleware.before_model`, state rewritten each time."""

    name = "SummarizationMiddleware"
    stateful = True

    def reset(self, budget: int) -> None:
        super().reset(budget)
        from langchain.agents.middleware import SummarizationMiddleware

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.mw = SummarizationMiddleware(
                shared_summarizer(budget),
                trigger=("tokens", budget),
                keep=("tokens", budget // 2),
                token_counter=default_counter(),
            )
        self.state: list[BaseMessage] = []
        self.consumed = 0

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        self.state = [*self.state, *history[self.consumed :]]
        self.consumed = len(history)
        out = self.mw.before_model({"messages": self.state}, None)  # type: ignore[arg-type]
        if out:
            self.state = [m for m in out["messages"] if not isinstance(m, RemoveMessage)]
        return list(self.state)


def langmem_available() -> bool:
    """Whether langmem is importable in this environment."""
    try:
        import langmem  # noqa: F401
    except ImportError:
        return False
    return True


def all_methods() -> list[Callable[[], Method]]:
    """Factories of every method that can run here."""
    methods: list[Callable[[], Method]] = [
        OursRules,
        OursNodeRules,
        OursNode,
        OursNodeProse,
        Trim,
        Middleware,
        ContextEditing,
    ]
    if langmem_available():
        methods.insert(4, Langmem)
    return methods
