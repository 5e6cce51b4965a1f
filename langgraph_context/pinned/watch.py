"""Watch check tools (tests, linters, builds) and keep `hot_issues` in step with them.

After each tool round, the node looks at the new `ToolMessage`s (those after the latest
AI message). A result from a configured check tool that failed opens a hot issue (or
refreshes the open one) naming the tool and its key error lines; a later successful
run of the same check resolves it. Error lines are tool output, so they are sanitized
before they become pinned items.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import content_text
from langgraph_context.safety import sanitize_untrusted
from langgraph_context.safety.detector import DetectorLike, as_detector
from langgraph_context.state import HotIssue, get_state_value, hot_issue_id

__all__ = [
    "create_hot_issue_node",
    "extract_error_lines",
    "is_failed_check",
    "track_hot_issues",
]

DEFAULT_MAX_ERROR_LINES = 5
DEFAULT_MAX_LINE_CHARS = 200

# Lines that report a failure in the output of common test runners, linters, compilers.
_ERROR_LINE = re.compile(
    r"""(?ix)
    ^\s*(?:FAILED|FAIL|ERROR|E\s{2,}|error(?:\[\w+\])?:|fatal:|panic:)
    | \b\w*(?:Error|Exception)\b(?::|\s*$)
    | \b[1-9]\d*\s+(?:failed|errors?|failures?)\b
    | \bassert(?:ion)?\w*\s+(?:failed|error)
    | \b(?:exit|return)\s+(?:code|status)\s*[:=]?\s*[1-9]\d*
    | ^\S+:\d+(?::\d+)?:?\s+\w
    """
)
# Content-level signs that a check run failed even though the tool reported success.
_FAILURE = re.compile(
    r"""(?imx)
    ^\s*(?:FAILED|FAIL:|ERROR:|error(?:\[\w+\])?:|fatal:|panic:|Traceback\ \(most\ recent)
    | \b[1-9]\d*\s+(?:failed|errors?)\b
    | \b(?:exit|return)\s+(?:code|status)\s*[:=]?\s*[1-9]\d*
    | \bbuild\s+failed\b
    | \bFound\s+[1-9]\d*\s+errors?\b
    """
)

CheckSelector = str | Collection[str] | Callable[[ToolMessage], bool]


def is_failed_check(message: ToolMessage) -> bool:
    """Return whether a check tool's result reports a failure.

    A result fails when its status is `error`, or when its text shows a failure the way
    common runners print it: a line starting `FAILED`/`ERROR:`/`error:`/a traceback,
    `N failed` / `N errors` with N > 0, a non-zero exit code, `build failed`.

    Args:
        message: The tool result.

    Returns:
        True for a failed run.

    Example:
        >>> is_failed_check(ToolMessage("3 passed, 1 failed", tool_call_id="1"))
        True
        >>> is_failed_check(ToolMessage("5 passed, 0 failed in 0.2s", tool_call_id="1"))
        False
    """
    if message.status == "error":
        return True
    return _FAILURE.search(content_text(message.content)) is not None


def extract_error_lines(
    text: str,
    *,
    max_lines: int = DEFAULT_MAX_ERROR_LINES,
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
) -> list[str]:
    r"""Return the key error lines of a failing run's output.

    Lines that look like errors (runner summaries, `Error:` lines, exceptions, file:line
    diagnostics) are kept in order without repeats; when none look like errors, the last
    non-empty lines are used instead.

    Args:
        text: The tool output.
        max_lines: At most this many lines are returned.
        max_line_chars: Longer lines are cut and end with `...`.

    Returns:
        The stripped lines.

    Example:
        >>> out = "tests/test_a.py F..\nFAILED tests/test_a.py::test_x - KeyError\n"
        >>> extract_error_lines(out + "1 failed, 2 passed in 0.1s")
        ['FAILED tests/test_a.py::test_x - KeyError', '1 failed, 2 passed in 0.1s']
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    picked: list[str] = []
    for line in lines:
        if _ERROR_LINE.search(line) and line not in picked:
            picked.append(line)
    if not picked:
        picked = lines[-max_lines:]
    cut = [
        line if len(line) <= max_line_chars else line[: max_line_chars - 3] + "..."
        for line in picked
    ]
    return cut[:max_lines]


def _matcher(checks: CheckSelector) -> Callable[[ToolMessage], bool]:
    if callable(checks):
        return checks
    names = {checks} if isinstance(checks, str) else set(checks)
    if not names or not all(isinstance(n, str) and n for n in names):
        msg = (
            "checks must be a tool name, a non-empty collection of tool names, or a "
            f"predicate on ToolMessage; got {checks!r}"
        )
        raise InvalidArgumentError(msg)
    return lambda message: message.name in names


def _new_tool_results(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    results: list[ToolMessage] = []
    names: dict[str, str] = {}
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            names = {str(tc.get("id")): tc["name"] for tc in message.tool_calls}
            break
        if isinstance(message, ToolMessage):
            results.append(message)
    named = []
    for result in reversed(results):
        if result.name is None and result.tool_call_id in names:
            named.append(result.model_copy(update={"name": names[result.tool_call_id]}))
        else:
            named.append(result)
    return named


def track_hot_issues(
    messages: Sequence[BaseMessage],
    open_issues: Sequence[HotIssue] | None,
    *,
    is_check: Callable[[ToolMessage], bool],
    is_failure: Callable[[ToolMessage], bool] = is_failed_check,
    max_error_lines: int = DEFAULT_MAX_ERROR_LINES,
    detector: DetectorLike | None = None,
) -> list[HotIssue]:
    """Return the hot issue updates implied by the latest tool round.

    Args:
        messages: The conversation; only the tool results after the last AI message
            are read.
        open_issues: The currently open hot issues.
        is_check: Whether a tool result comes from a check tool.
        is_failure: Whether a check result is a failure.
        max_error_lines: At most this many error lines go into a summary.
        detector: The `safety.Detector` (or scorer) the summary is sanitized with;
            `None` for the package's rules.

    Returns:
        Updates for `hot_issue_reducer`: an active entry per failing check, a resolved
        entry per open issue whose check now passes. Empty when nothing changed.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> ai = AIMessage("", tool_calls=[{"name": "lint", "args": {}, "id": "1"}])
        >>> fail = ToolMessage("x.py:3:1: F401 unused import", tool_call_id="1", status="error")
        >>> [u["summary"] for u in track_hot_issues([ai, fail], [], is_check=lambda m: True)]
        ['x.py:3:1: F401 unused import']
    """
    current = {issue["id"]: issue for issue in open_issues or []}
    updates: dict[str, HotIssue] = {}
    for result in _new_tool_results(messages):
        if result.name is None or not is_check(result):
            continue
        issue_id = hot_issue_id(result.name)
        before = updates.get(issue_id, current.get(issue_id))
        if before is not None and before.get("last_call_id") == result.tool_call_id:
            continue
        if is_failure(result):
            lines = extract_error_lines(content_text(result.content), max_lines=max_error_lines)
            summary = sanitize_untrusted("\n".join(lines), detector=detector) or "(no output)"
            failures = 1
            if before is not None and before["status"] == "active":
                failures += before.get("failures", 1)
            updates[issue_id] = HotIssue(
                id=issue_id,
                check=result.name,
                summary=summary,
                status="active",
                failures=failures,
                last_call_id=result.tool_call_id,
            )
        elif before is not None:
            updates[issue_id] = HotIssue(
                id=issue_id,
                check=result.name,
                summary=before["summary"],
                status="resolved",
                last_call_id=result.tool_call_id,
            )
    return [u for u in updates.values() if u["status"] == "active" or u["id"] in current]


def create_hot_issue_node(
    checks: CheckSelector,
    *,
    is_failure: Callable[[ToolMessage], bool] = is_failed_check,
    messages_key: str = "messages",
    hot_issues_key: str = "hot_issues",
    max_error_lines: int = DEFAULT_MAX_ERROR_LINES,
    detector: DetectorLike | None = None,
) -> Callable[[Any], dict[str, Any]]:
    """Create a node that opens and resolves hot issues from check tool results.

    Place it right after the tool node (`tools -> watch -> agent`).

    Args:
        checks: Which tools are checks: one tool name, a collection of names, or a
            predicate on the `ToolMessage`.
        is_failure: Whether a check's result is a failure (default `is_failed_check`).
        messages_key: State key of the messages.
        hot_issues_key: State key of the hot issues (a `hot_issue_reducer` channel).
        max_error_lines: At most this many error lines go into an issue's summary.
        detector: The `safety.Detector` (or any scorer) an issue's summary is
            sanitized with; `None` for the package's rules.

    Returns:
        A node returning `{hot_issues_key: updates}`, or `{}` when nothing changed.

    Raises:
        ValueError: If `checks` names no tool, or `max_error_lines` is below 1.
        TypeError: If `detector` is not a detector or scorer.
    """
    is_check = _matcher(checks)
    chosen = as_detector(detector)
    if max_error_lines < 1:
        msg = f"max_error_lines must be >= 1, got {max_error_lines!r}"
        raise InvalidArgumentError(msg)

    def watch_checks(state: Any) -> dict[str, Any]:
        updates = track_hot_issues(
            get_state_value(state, messages_key, []),
            get_state_value(state, hot_issues_key, []),
            is_check=is_check,
            is_failure=is_failure,
            max_error_lines=max_error_lines,
            detector=chosen,
        )
        return {hot_issues_key: updates} if updates else {}

    return watch_checks
