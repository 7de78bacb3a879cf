"""Put on PYTHONPATH, this makes the optional packages look not installed to the process and its
children: they are neither importable nor listed as distributions (``find_spec`` gives None,
``importlib.metadata`` does not find them), as in a plain ``pip install jbcompile``.

tests/test_base_install.py checks that BLOCKED covers every package ``jbcompile.extras.optional_import``
is asked for.
"""

from __future__ import annotations

import sys
from typing import Any

BLOCKED = frozenset(
    {"torch", "transformers", "accelerate", "openai", "anthropic", "httpx", "tenacity", "vllm", "deepl",
     "matplotlib", "japanize_matplotlib"}
)  # fmt: skip


def _blocked(name: str) -> bool:
    return name.partition(".")[0].replace("-", "_").lower() in BLOCKED


class _Hiding:
    """A finder of sys.meta_path, with the blocked packages left out of what it finds."""

    def __init__(self, inner: Any):
        self._inner = inner

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        return None if _blocked(name) else self._inner.find_spec(name, path, target)

    def find_distributions(self, *args: Any, **kwargs: Any) -> Any:
        found = getattr(self._inner, "find_distributions", None)
        if found is None:
            return iter(())
        return (d for d in found(*args, **kwargs) if not _blocked(d.metadata["Name"] or ""))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


sys.meta_path[:] = [_Hiding(finder) for finder in sys.meta_path]
