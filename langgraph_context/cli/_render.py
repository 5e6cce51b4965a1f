"""Rich rendering helpers shared by the commands."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

BAR_WIDTH = 40


def usage_bar(used: int, budget: int, *, width: int = BAR_WIDTH) -> Text:
    """Render `used / budget` tokens as a coloured bar with the percentage.

    Example:
        >>> usage_bar(50, 100, width=10).plain
        '█████░░░░░  50/100 tokens (50%)'
    """
    share = used / budget if budget > 0 else 1.0
    filled = min(width, round(share * width))
    colour = "green" if share < 0.7 else "yellow" if share <= 1.0 else "red"
    bar = Text("█" * filled, style=colour)
    bar.append("░" * (width - filled), style="dim")
    bar.append(f"  {used:,}/{budget:,} tokens ({share:.0%})")
    return bar


def console(*, stderr: bool = False) -> Console:
    """Return a console that degrades to plain text when not attached to a terminal."""
    return Console(stderr=stderr, highlight=False, soft_wrap=False)
