"""Greeting helpers."""


def greet(name):
    """Return a greeting for `name`."""
    return "Hello, " + name + "!"
