"""How mae words counts for people (shared by every layer)."""


def counted(number: int, noun: str) -> str:
    """``1 step``, ``2 steps``."""
    return f"{number} {noun}" + ("" if number == 1 else "s")
