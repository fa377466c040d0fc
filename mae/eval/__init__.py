"""Evaluation: task suites, graders, metrics and reports. It judges runs; the phone only exposes state."""
