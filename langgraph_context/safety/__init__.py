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
    BOUNDARY_NOTICE,
    DEFAULT_BOUNDARY_BYTES,
    HARDENING_INSTRUCTION,
    MIN_BOUNDARY_BYTES,
    fenced_block,
    new_boundary,
    protect_packet,
    wrap_untrusted,
)
from langgraph_context.safety.detector import (
    DEFAULT_SCORE_THRESHOLD,
    Detector,
    DetectorLike,
    InjectionScorer,
)
from langgraph_context.safety.guard import (
    DEFAULT_GUARD_REPLACEMENT,
    GUARD_ACTIONS,
    GuardAction,
    InjectionFlag,
    OutputVerdict,
    PromptInjectionError,
    SafetyStateMixin,
    append_flags,
    check_output,
    create_output_guard_node,
)
from langgraph_context.safety.patterns import BOUNDARY_TAG_PREFIX
from langgraph_context.safety.sanitize import (
    DATA_PREFIX,
    FILTERED_NOTICES,
    INJECTION_KINDS,
    InjectionFinding,
    InjectionKind,
    find_injections,
    sanitize_untrusted,
    visible_form,
)

__all__ = [
    "BOUNDARY_NOTICE",
    "BOUNDARY_TAG_PREFIX",
    "DATA_PREFIX",
    "DEFAULT_BOUNDARY_BYTES",
    "DEFAULT_GUARD_REPLACEMENT",
    "DEFAULT_SCORE_THRESHOLD",
    "FILTERED_NOTICES",
    "GUARD_ACTIONS",
    "HARDENING_INSTRUCTION",
    "INJECTION_KINDS",
    "MIN_BOUNDARY_BYTES",
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
    "append_flags",
    "check_output",
    "create_output_guard_node",
    "fenced_block",
    "find_injections",
    "new_boundary",
    "protect_packet",
    "sanitize_untrusted",
    "visible_form",
    "wrap_untrusted",
]
