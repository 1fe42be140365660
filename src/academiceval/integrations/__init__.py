"""Bridges to other evaluation harnesses (optional extras): `integrations.inspect` runs our rounds in inspect_ai."""
