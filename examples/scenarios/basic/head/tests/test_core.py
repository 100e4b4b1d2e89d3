from greeter.core import greet, greet_all, parse_names


def test_greet():
    assert greet("Ada") == "Hello, Ada!"


def test_greet_with_greeting():
    assert greet("Ada", greeting="Welcome") == "Welcome, Ada!"


def test_greet_all():
    assert greet_all(["Ada", "Grace"]) == ["Hello, Ada!", "Hello, Grace!"]


def test_parse_names():
    assert parse_names("Ada, Grace") == ["Ada", "Grace"]
