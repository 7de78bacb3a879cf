"""Data-parallel runs (``accelerate launch`` / ``torchrun``): which process this is, and the two
collective steps the eval loop needs (gather, barrier). One process is the same as no launcher."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..extras import optional_import


@dataclass
class Dist:
    rank: int = 0
    world: int = 1
    device: str | None = None
    state: Any = None

    @property
    def main(self) -> bool:
        return self.rank == 0

    def gather(self, items: list) -> list:
        if self.world == 1:
            return items
        gather_object = optional_import("accelerate.utils", "eval").gather_object

        return list(gather_object(items))

    def barrier(self) -> None:
        if self.state is not None and self.world > 1:
            self.state.wait_for_everyone()


def distributed() -> Dist:
    """This process's place in a launched run (``WORLD_SIZE`` > 1), else a single process."""
    launched = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if not launched:
        return Dist()
    torch = optional_import("torch", "eval", "a launched data-parallel run")
    PartialState = optional_import("accelerate", "eval").PartialState

    cpu = not torch.cuda.is_available() or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")
    state = PartialState(cpu=cpu)
    device = None if cpu else str(state.device)
    return Dist(rank=state.process_index, world=state.num_processes, device=device or "cpu", state=state)
