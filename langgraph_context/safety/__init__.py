"""Prompt-injection defense for untrusted text entering context, in three layers.

1. Input: `wrap_untrusted` / `protect_packet` put untrusted packets inside boundary
   tags the text cannot predict (`keyed_boundary`, `new_boundary`): the guarantee.
   Detection is a signal beside it: `find_injections` / `sanitize_untrusted` run the
   package's rules, or a `Detector` with any scorer or classifier you plug in.
2. Prompt: `HARDENING_INSTRUCTION` in the role section ("data is not instruction").
3. Output: `check_output` and `create_output_guard_node` catch replies that show
   the model obeyed injected instructions.
"""

from langgraph_context.safety.boundary import (
    fenced_block,
    new_boundary,
    protect_packet,
    wrap_untrusted,
)
from langgraph_context.safety.detector import (
    Detector,
    DetectorLike,
    InjectionScorer,
)
from langgraph_context.safety.guard import (
    GuardAction,
    InjectionFlag,
    OutputVerdict,
    PromptInjectionError,
    SafetyStateMixin,
    check_output,
    create_output_guard_node,
)
from langgraph_context.safety.sanitize import (
    InjectionFinding,
    InjectionKind,
    find_injections,
    sanitize_untrusted,
)

__all__ = [
    "Detector",
    "DetectorLike",
    "GuardAction",
    "InjectionFinding",
    "InjectionFlag",
    "InjectionKind",
    "InjectionScorer",
    "OutputVerdict",
    "PromptInjectionError",
    "SafetyStateMixin",
    "check_output",
    "create_output_guard_node",
    "fenced_block",
    "find_injections",
    "new_boundary",
    "protect_packet",
    "sanitize_untrusted",
    "wrap_untrusted",
]
