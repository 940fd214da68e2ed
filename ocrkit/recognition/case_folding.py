"""Case-insensitive targets: score a character as "upper or lower case" for sources whose labels ignore case.

Some public ground truth (SROIE's receipts) is transcribed in capitals even where the print is lower case.
Trained as written, such labels teach "lower-case glyph → capital", and the model starts writing lower-case
print in capitals. For those samples each cased target character is scored by the summed probability of
its two case forms (log-sum-exp), in the decoder's cross-entropy and in the CTC loss alike, so the image,
not the label, decides the case.
"""

from __future__ import annotations

import torch
from transformers import PreTrainedTokenizerBase


def case_partners(tokenizer: PreTrainedTokenizerBase, size: int) -> torch.Tensor:
    """Per token id < `size` (the model's vocabulary), the id of its other-case character, else itself."""
    vocab = tokenizer.get_vocab()
    partners = torch.arange(size)
    for token, idx in vocab.items():
        if len(token) == 1 and token.swapcase() != token and len(token.swapcase()) == 1:
            other = vocab.get(token.swapcase())
            if other is not None and max(idx, other) < size:
                partners[idx] = other
    return partners


def fold_cases(log_probs: torch.Tensor, partners: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """log P(token or its case partner) along the last axis, for the leading-axis `rows` only.

    `log_probs`: (B, ..., V) normalised log-probabilities; `rows`: (B,) bool. The folded values are not a
    distribution any more, but gathered at a target they are exactly the probability of either case.
    """
    if not bool(rows.any()):
        return log_probs
    partners = partners.to(log_probs.device)
    cased = partners != torch.arange(partners.numel(), device=partners.device)
    folded = torch.where(cased, torch.logaddexp(log_probs, log_probs.index_select(-1, partners)), log_probs)
    shape = (rows.shape[0],) + (1,) * (log_probs.dim() - 1)
    return torch.where(rows.to(log_probs.device).view(shape), folded, log_probs)
