"""A tiny library that greets people."""
