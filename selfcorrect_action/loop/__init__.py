"""The self-correction loop: one RunState, pure steps over it, one orchestrator."""
