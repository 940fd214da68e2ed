"""The orientation classifier in torch: a timm network over gray windows, four classes (quarter turns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ocrkit.hub.model_folder import OrientationSpec, check_folder, write_spec
from ocrkit.images.frame import ANGLES
from ocrkit.orientation.decide import classify
from ocrkit.pages.document import Orientation
from ocrkit.util.errors import ModelError

WEIGHTS = "model.safetensors"


def build(arch: str) -> torch.nn.Module:
    """A fresh network: one gray input channel, one output per quarter turn (timm, no download)."""
    import timm

    return timm.create_model(arch, pretrained=False, in_chans=1, num_classes=len(ANGLES))


def save(model: torch.nn.Module, spec: OrientationSpec, folder: Path) -> None:
    """Weights (safetensors) and settings: a folder `OrientationClassifier.load` reads."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(folder / WEIGHTS), {"format": "pt"})
    write_spec(folder, spec)


class OrientationClassifier:
    """Which quarter turn puts a page upright, read by torch."""

    def __init__(self, model: torch.nn.Module, spec: OrientationSpec) -> None:
        self.model = model.eval()
        self.spec = spec

    @classmethod
    def load(cls, folder: str | Path) -> OrientationClassifier:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        folder = Path(folder)
        spec = check_folder(folder, "orientation")
        model = build(spec.arch)
        try:
            state = load_file(str(folder / WEIGHTS))
            model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in state.items()})
        except (OSError, RuntimeError, SafetensorError) as exc:
            raise ModelError(
                folder, f"cannot load orientation classifier ({exc.__class__.__name__}: {exc})"
            ) from None
        return cls(model, spec)

    @torch.inference_mode()
    def logits(self, windows: np.ndarray) -> np.ndarray:
        return self.model(torch.from_numpy(windows)).float().numpy()

    def classify(self, image: np.ndarray) -> Orientation:
        """How a page (RGB, or gray) was sent (ocrkit.orientation.decide.classify)."""
        return classify(image, self.spec, self.logits)
