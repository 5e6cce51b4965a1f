"""Instructions for the summarizer model, in two styles.

`handoff` asks for a full working handoff (what a colleague needs to continue the job
tomorrow); `snapshot` asks for a dense, tagged state record. Both forbid inventing
facts and ask for the same status labels, so a later summary can extend an earlier
one line by line. The conversation itself is never put in these instructions: it goes
in a separate message, framed as data to summarize.
"""

from __future__ import annotations

from typing import Literal, get_args

from langgraph_context.errors import InvalidArgumentError

__all__ = [
    "PromptStyle",
    "summary_instructions",
]

PromptStyle = Literal["handoff", "snapshot"]
PROMPT_STYLES: tuple[PromptStyle, ...] = get_args(PromptStyle)

STATUS_LABELS = ("[Done]", "[Failed attempt]", "[Pending]", "[Next]")

_RULES = """\
Ground rules:
- Write only what the conversation shows. Do not invent files, results, decisions or
  user wishes; if something is unclear, say it is unclear.
- Copy exact strings: file paths, function and command names, identifiers (ids,
  numbers, dates) and error messages, verbatim.
- Mark every piece of work with one label: [Done] (finished and confirmed),
  [Failed attempt] (tried, did not work: say why, so it is not repeated),
  [Pending] (asked for or started, not finished) or [Next] (the immediate next step).
  Never mark as done what was only attempted.
- You summarize; you do not carry out the work, answer the user or call tools.
- If an earlier summary is given, extend and correct it with the new messages: keep
  every fact of it that still holds, update statuses that changed, and drop only what
  the new messages make obsolete.
"""

HANDOFF_PROMPT = (
    """\
You are writing the handoff note for an agent whose conversation is being shortened.
The note replaces the messages below; the agent will continue the task from it alone,
so it must hold everything needed to go on without re-reading or re-asking.

Write these sections, in this order, using Markdown headings:
1. Goal: what the user wants overall, and how that goal changed over time.
2. User instructions and constraints: rules, preferences and corrections the user
   gave, quoted when short.
3. Key facts: technical context, decisions taken and why, identifiers and values that
   later steps need.
4. Files and code: each file read, created, changed or deleted, with what was done
   and any signature or snippet later steps depend on.
5. Errors and fixes: each error seen (exact message) and what fixed it, or that it is
   still open.
6. Work status: a list of labelled items ([Done], [Failed attempt], [Pending]).
7. Where it stopped: what was in progress at the end of these messages, and the
   [Next] step, only if it follows directly from the user's request.

"""
    + _RULES
)

SNAPSHOT_PROMPT = (
    """\
You are compressing an agent's conversation into a state snapshot. The snapshot
replaces the messages below and must be dense: short lines, no prose, no repetition.

Answer with exactly this structure and nothing else:
<state_snapshot>
  <goal>the user's overall objective, one line</goal>
  <constraints>user rules, preferences and corrections, one per line</constraints>
  <knowledge>facts, decisions and identifiers later steps need, one per line</knowledge>
  <files>path: read | created | changed | deleted, and why, one per line</files>
  <errors>exact error line -> fix, or -> still open, one per line</errors>
  <progress>labelled items: [Done] / [Failed attempt] / [Pending] / [Next]</progress>
</state_snapshot>

"""
    + _RULES
)

_PROMPTS: dict[str, str] = {"handoff": HANDOFF_PROMPT, "snapshot": SNAPSHOT_PROMPT}


def summary_instructions(style: PromptStyle = "handoff", *, prompt: str | None = None) -> str:
    """Return the summarizer's instructions.

    Args:
        style: `handoff` (detailed, sectioned) or `snapshot` (dense, tagged).
        prompt: Your own instructions, used instead of the built-in style.

    Returns:
        The instruction text.

    Raises:
        ValueError: If `style` is unknown or `prompt` is blank.

    Example:
        >>> "[Failed attempt]" in summary_instructions("snapshot")
        True
    """
    if prompt is not None:
        if not isinstance(prompt, str) or not prompt.strip():
            msg = f"prompt must be a non-empty string, got {prompt!r}"
            raise InvalidArgumentError(msg)
        return prompt
    if style not in _PROMPTS:
        msg = f"style must be one of {list(PROMPT_STYLES)}, got {style!r}"
        raise InvalidArgumentError(msg)
    return _PROMPTS[style]
