"""Reports of simulated runs: the per-engine timeline picture (PNG, no plotting dependency) and the
per-core busy figures it shares with the text report."""
