"""The wallet service (shell: implemented by a later issue)."""
