"""Test support: run a real broker process and talk to it."""
