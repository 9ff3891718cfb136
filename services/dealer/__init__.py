"""The dealer service (shell: implemented by a later issue)."""
