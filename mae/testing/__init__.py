"""Test and demo helpers that ship with mae: the scripted fake model server."""
