"""The compared methods, each replayed turn by turn as an agent would run it.

Stateless views (ours rule-based, trim_messages) see the whole history each turn.
langmem keeps its running summary between turns (as its `SummarizationNode` does);
LangChain's `SummarizationMiddleware` rewrites the agent's state, so its next turn
starts from its own previous output plus the new messages. Our node runs in `view`
mode with its state record carried between turns. The LLM-based methods all use the
same scripted summarizer, which answers with one fixed text. Stateful methods are
stepped through every model call of a session (see `replay.py`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage, RemoveMessage, trim_messages

from langgraph_context.compaction import SummaryOptions, compact_messages, create_compaction_node
from langgraph_context.tokens import default_counter

SCRIPTED_SUMMARY = "Summary of the earlier conversation (scripted summarizer, no real model)."


def scripted_model() -> FakeListChatModel:
    """The summarizer every LLM-based method gets: one fixed answer."""
    return FakeListChatModel(responses=[SCRIPTED_SUMMARY])


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
        result = compact_messages(history, max_tokens=self.budget)
        self.last_note = result.stats.note
        return result.messages


class OursNode(Method):
    """`create_compaction_node(mode="view")` with the scripted summarizer."""

    name = "ours (node+summary)"
    stateful = True

    def reset(self, budget: int) -> None:
        super().reset(budget)
        self.node = create_compaction_node(
            max_tokens=budget,
            mode="view",
            model=scripted_model(),
            summary_options=SummaryOptions(max_summary_tokens=summary_tokens(budget)),
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
        self.model = scripted_model()
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
                scripted_model(),
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
    methods: list[Callable[[], Method]] = [OursRules, OursNode, Trim, Middleware]
    if langmem_available():
        methods.insert(3, Langmem)
    return methods
