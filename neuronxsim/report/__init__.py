"""Reports of simulated runs: the per-engine timeline picture (PNG, no plotting dependency)."""
