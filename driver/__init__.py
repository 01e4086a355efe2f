"""driver: `owed drive`, the structured-concurrency loop (issue 7)."""
