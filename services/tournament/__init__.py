"""The tournament service (shell: implemented by a later issue)."""
