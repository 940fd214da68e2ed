"""Make `import torch` / `import transformers` fail, to prove the runtime works in a torch-free install.

Usage: python -c "import block_torch; ..." (the tests use it; deploy users simply don't install torch).
"""

import importlib.abc
import sys

BLOCKED = ("torch", "torchvision", "transformers")


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{name} is blocked (torch-free deployment)", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
