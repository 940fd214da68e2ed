"""How many tokens the greedy decoder may emit for a line of a given width.

A line letterboxed to W pixels holds at most about `CHARS_PER_PATCH` characters per patch column (real
crops: ~2-3 characters per unit of aspect). The budget stops a decoder that never emits </s> from running
to its last learned position on every short line.
"""

from __future__ import annotations

import math

CHARS_PER_PATCH = 3.0


def greedy_token_budget(
    width: int, patch: int, max_positions: int, chars_per_patch: float = CHARS_PER_PATCH
) -> int:
    """Token budget for a batch `width` pixels wide (ViT patches of `patch` pixels), capped by the
    decoder's learned positions (one is the start token)."""
    budget = math.ceil(width / patch * chars_per_patch) + 2
    return max(2, min(budget, max_positions - 1))
