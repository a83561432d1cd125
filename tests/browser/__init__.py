"""Browser tests (Playwright + Debian chromium against a real server)."""
