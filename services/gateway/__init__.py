"""The gateway service (shell: implemented by a later issue)."""
