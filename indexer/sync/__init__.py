"""The index kept in step with the notes: incremental sync, rebuild, verify, the passes, the health checks."""
