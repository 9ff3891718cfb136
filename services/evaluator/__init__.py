"""The evaluator service (shell: implemented by a later issue)."""
