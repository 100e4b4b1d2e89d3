"""Command line: greet a comma-separated list of names."""

import sys

from greeter.core import greet_all, parse_names


def main(argv):
    names = parse_names(argv[1])
    for line in greet_all(names):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
