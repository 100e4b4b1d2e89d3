# greet NAME [GREETING]: prints a greeting.
greet() {
    name=$1
    greeting=${2:-Hello}
    echo "$greeting, $name!"
}

# greet_all NAME...: greets each name.
greet_all() {
    for n in "$@"; do
        greet "$n"
    done
}
