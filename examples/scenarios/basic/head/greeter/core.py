"""Greeting helpers."""

DEFAULT_GREETING = "Hello"


def greet(name, greeting=DEFAULT_GREETING):
    """Return a greeting for `name`."""
    return greeting + ", " + name + "!"


def greet_all(names, greeting=DEFAULT_GREETING):
    """Return one greeting per name, in order."""
    result = []
    for n in names:
        result.append(greet(n, greeting))
    return result


def parse_names(text):
    """Split a comma-separated list of names."""
    return [part.strip() for part in text.split(",")]
