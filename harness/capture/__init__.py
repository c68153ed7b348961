"""Live capture: mitmproxy addons that record traffic with the service, and their runner."""
