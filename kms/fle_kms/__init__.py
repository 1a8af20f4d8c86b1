"""The project's KMS: PyKMIP configured for mutual TLS, plus an admin CLI for the keys."""
