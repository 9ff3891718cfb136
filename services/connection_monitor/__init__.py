"""The connection monitor service (shell: implemented by a later issue)."""
