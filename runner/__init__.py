"""runner: the process-group runner (placeholder until issue 3 lands)."""
